import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

// Each published package's surface is committed as `api-report.md` (every name each entry exports,
// with its type, from the built declarations), so a change of surface shows in review.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

it("has a current API report for every published package (node scripts/api-report.mjs rewrites them)", async () => {
  const outcome = await run(process.execPath, ["scripts/api-report.mjs", "--check"], { cwd: ROOT }).then(
    () => "current",
    (error: { stderr?: string }) => error.stderr ?? String(error),
  );
  expect(outcome).toBe("current");
});
