import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

const run = promisify(execFile);
const here = new URL("../", import.meta.url);
const folder = new URL(".snippet-check/", here);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

// The core README's Target snippet is what target authors copy first: it must compile as written.
it("type-checks the Target snippet of the core README, as written", async () => {
  const readme = await readFile(new URL("../../packages/remote-session-core/README.md", here), "utf8");
  const section = readme.slice(readme.indexOf("## The Target port"));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(snippet).toContain("export const echoTarget: Target");
  await mkdir(folder, { recursive: true });
  await writeFile(new URL("target.ts", folder), snippet!);
  await writeFile(
    new URL("tsconfig.json", folder),
    JSON.stringify({ extends: "../../../tsconfig.base.json", compilerOptions: { noEmit: true }, include: ["target.ts"] }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = await run(process.execPath, [tsc, "-p", fileURLToPath(new URL("tsconfig.json", folder))]).catch((error: { stdout: string }) => error);
  expect((result as { stdout: string }).stdout).toBe("");
}, 60_000);
