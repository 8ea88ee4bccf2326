import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

// Each guide's code is a region of a consumer fixture that a consumer test compiles against the
// packed tarballs and runs; the guide must show it verbatim, so it cannot drift from what works.
const GUIDES = [
  // den-api's edit, file by file: each changed line of den-api's own modules and the new module.
  { guide: "den-api.md", fixture: "den-api/src/remote-session-capabilities.ts", region: "den-api-actions", maxLines: 12 },
  { guide: "den-api.md", fixture: "den-api/src/builtin-skills.ts", region: "den-api-skills-import", maxLines: 1 },
  { guide: "den-api.md", fixture: "den-api/src/builtin-skills.ts", region: "den-api-skills", maxLines: 7 },
  { guide: "den-api.md", fixture: "den-api/src/remote-sessions.ts", region: "den-api-host", maxLines: 30 },
  { guide: "den-api.md", fixture: "den-api/src/capability-registry.ts", region: "den-api-table-import", maxLines: 1 },
  { guide: "den-api.md", fixture: "den-api/src/capability-registry.ts", region: "den-api-table", maxLines: 9 },
  { guide: "den-api.md", fixture: "den-api/src/main.ts", region: "den-api-boot", maxLines: 5 },
  { guide: "electron-runner.md", fixture: "electron-runner/main.ts", region: "electron-runner" },
  { guide: "new-target.md", fixture: "memo-target/src/memo-target.ts", region: "new-target" },
  { guide: "new-target.md", fixture: "memo-target/test/conformance.test.ts", region: "conformance" },
];

/** The text between `// #region <name>` and the next `// #endregion`, markers included. */
function regionOf(text: string, name: string): string {
  const start = text.indexOf(`// #region ${name}\n`);
  const end = text.indexOf("// #endregion", start);
  if (start < 0 || end < 0) throw new Error(`no region ${name}`);
  return text.slice(start, end + "// #endregion".length);
}

describe("guides", () => {
  for (const { guide, fixture, region, maxLines } of GUIDES) {
    it(`${guide} shows ${fixture} (${region}) as the consumer tests compile and run it`, async () => {
      const code = regionOf(await readFile(new URL(`../fixtures/${fixture}`, import.meta.url), "utf8"), region);
      const text = await readFile(new URL(`../../../docs/guides/${guide}`, import.meta.url), "utf8");
      expect(text).toContain(`\`\`\`ts\n${code}\n\`\`\``);
      if (maxLines) expect(code.split("\n").length - 2).toBeLessThanOrEqual(maxLines);
    });
  }
});
