// What the one-loop Electron runner costs in a desktop app: the guide's entry (remote sessions and
// a host's Automation runs on one loop) bundled and minified by esbuild, beside the same entry
// without its `workHandlers` (the remote-session runner alone), with zod in the bundle and
// without it (an app that already ships zod), raw and gzipped.
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const entry = new URL("../../tools/consumers/fixtures/electron-runner/main.ts", import.meta.url);
const oneLoop = await readFile(entry, "utf8");
// The same entry with its host-kind handlers cut out: from `workHandlers: {` to its closing `},`.
const start = oneLoop.indexOf("  workHandlers: {");
const end = oneLoop.indexOf("\n  },\n", start) + "\n  },\n".length;
if (start < 0 || end < start) throw new Error("the entry has no workHandlers block");
const sessionsOnly = oneLoop.slice(0, start) + oneLoop.slice(end);

async function size(contents: string, external: string[]) {
  const result = await build({
    stdin: { contents, loader: "ts", resolveDir: new URL(".", entry).pathname, sourcefile: "main.ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    minify: true,
    external,
    write: false,
    logLevel: "error",
  });
  const code = result.outputFiles[0]!.contents;
  return { kB: +(code.length / 1000).toFixed(1), gzipKB: +(gzipSync(code, { level: 9 }).length / 1000).toFixed(1) };
}

const rows: Record<string, Record<string, unknown>> = {};
for (const [label, external] of [
  ["without zod", ["zod"]],
  ["with zod", []],
] as const) {
  rows[`remote sessions only, ${label}`] = await size(sessionsOnly, [...external]);
  rows[`one loop (sessions + automation.run), ${label}`] = await size(oneLoop, [...external]);
}
console.log(`runner bundle size — esbuild ${(await import("esbuild")).version}, minified, ESM, platform node`);
console.table(rows);
console.log(
  `  entry: tools/consumers/fixtures/electron-runner/main.ts (${oneLoop.split("\n").length} lines); the baseline is the same file without workHandlers.`,
);
