import { defineConfig, type Options } from "tsup";

// Every package and app builds the same way; only the entries differ.
const base: Options = { format: ["esm"], sourcemap: true, clean: true, target: "node20" };

/** A library: ESM plus bundled type declarations for each entry. */
export const library = (entry: Options["entry"] = ["src/index.ts"]) => defineConfig({ ...base, entry, dts: true });

/** An app: its importable index (with types) and its `main` executable. */
export const app = () => defineConfig({ ...base, entry: ["src/index.ts", "src/main.ts"], dts: { entry: "src/index.ts" } });
