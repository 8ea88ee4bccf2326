import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Every file of the project must stand on the repository alone: no citation of documents a reader
// of this repository does not have (design notes and research kept outside the checkout), and
// no link in the root README or docs/ that points at a missing file.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SELF = relative(ROOT, fileURLToPath(import.meta.url));

// One pattern for git grep (POSIX extended) and for JavaScript alike.
const CITATION = /openwork-wire|real-worker\.md|openwork-contracts|mcp-facts|toolchain\.md|anchors\.md|field\.md|DESIGN(\.md| §)|research[:/ ]|shared\//;
// The desktop target's OpenWork dialect lives in a source file of that name: importing it is no citation.
const OWN_SOURCE = /openwork-wire\.(ts|js)\b/g;
const NOT_SCANNED = [
  "pnpm-lock.yaml",
  "bench/results",
  // Applied migrations keep their text: changing it would change what was applied.
  "**/sql/*.sql",
  "**/sql-migrations.generated.ts",
  SELF,
];

/** `file:line: text` of every tracked line that cites an outside document. */
async function citations(): Promise<string[]> {
  const args = ["grep", "-nE", CITATION.source, "--", ".", ...NOT_SCANNED.map((path) => `:(exclude,glob)${path}`)];
  const { stdout } = await run("git", args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch((error: { code?: number; stdout?: string }) => {
    if (error.code === 1) return { stdout: "" }; // git grep: no match
    throw error;
  });
  return stdout.split("\n").filter((line) => line !== "" && CITATION.test(line.replace(OWN_SOURCE, "")));
}

/** Relative link targets of a markdown file (web links, mail and in-page anchors left out). */
function relativeLinks(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
  return targets.filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target)).map((target) => target.split("#")[0]!);
}

describe("the repository stands alone", () => {
  it("cites no document outside the repository", async () => {
    expect(await citations()).toEqual([]);
  });

  it("finds a citation the pattern names, and ignores imports of the dialect's source file", () => {
    expect(CITATION.test("see DESIGN §9".replace(OWN_SOURCE, ""))).toBe(true);
    expect(CITATION.test("(research: openwork-wire §4.6)".replace(OWN_SOURCE, ""))).toBe(true);
    expect(CITATION.test('import { x } from "./openwork/openwork-wire.js";'.replace(OWN_SOURCE, ""))).toBe(false);
  });

  it("has docs/architecture.md", () => {
    expect(existsSync(join(ROOT, "docs/architecture.md"))).toBe(true);
  });

  const docs = existsSync(join(ROOT, "docs")) ? readdirSync(join(ROOT, "docs")) : [];
  const markdown = ["README.md", ...docs.filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
  it.each(markdown)("%s links only to files that exist", (file) => {
    const links = relativeLinks(readFileSync(join(ROOT, file), "utf8")).filter((link) => link !== "");
    const missing = links.filter((link) => !existsSync(join(ROOT, dirname(file), decodeURIComponent(link))));
    expect(missing).toEqual([]);
  });
});
