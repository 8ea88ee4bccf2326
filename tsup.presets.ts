import { defineConfig, type Options } from "tsup";

// Every package and app builds the same way; only the entries differ.
const base: Options = { format: ["esm"], sourcemap: true, clean: true, target: "node20" };

// `npm start` builds with BUILD_DECLARATIONS=0: nothing reads a .d.ts at run time, and the
// declarations are most of the build's time. turbo.json lists the variable in the build's hash,
// so such a build is never restored as the full one the type-checks of dependents read.
const declarations = process.env.BUILD_DECLARATIONS !== "0";

/** A library: ESM plus bundled type declarations for each entry. */
export const library = (entry: Options["entry"] = ["src/index.ts"]) => defineConfig({ ...base, entry, dts: declarations });

/** An app: its importable index (with types) and its `main` executable. */
export const app = () => defineConfig({ ...base, entry: ["src/index.ts", "src/main.ts"], dts: declarations && { entry: "src/index.ts" } });
