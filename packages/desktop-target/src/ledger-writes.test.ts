import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

// The ledger (remote-session-core) is the one writer of `remote_session`: this package moves its
// sessions through the ledger's functions (`createSessionLedger(tx).require`, `turnStartMove`) so
// the transition table and every column's meaning stay in one place.
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRITE = /\b(update|insert\s+into|delete\s+from)\s+remote_session\b(?!_)/i;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|sql)$/.test(entry.name) && !/\.test\.ts$|\.generated\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

it("writes the ledger's remote_session table only through the ledger's functions", () => {
  const files = [...sourcesUnder(join(ROOT, "src")), ...sourcesUnder(join(ROOT, "sql"))];
  expect(files.length).toBeGreaterThan(50);
  const writers = files.filter((file) => WRITE.test(readFileSync(file, "utf8"))).map((file) => file.slice(ROOT.length));
  expect(writers).toEqual([]);
});
