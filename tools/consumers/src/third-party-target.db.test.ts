import { cp, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsumerFolder, installConsumer } from "./consumer-folder.js";

// A target written by someone else, against the tarballs only: its own package, compiled by
// TypeScript against the published declarations, then the conformance kit of
// `@openwork/remote-session-core/testing` run on it by the vitest installed beside it.
const db = useTestDatabase();
let folder: ConsumerFolder;
let target: string;

beforeAll(async () => {
  folder = await installConsumer(["remote-session-core"], ["zod", "postgres", "vitest", "@types/node"]);
  target = join(folder.dir, "memo-target");
  await cp(new URL("../fixtures/memo-target/", import.meta.url), target, { recursive: true });
});
afterAll(async () => {
  await folder?.remove();
});

it("compiles a Target of its own against the published declarations (strict)", async () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = await folder.node([tsc, "-p", join(target, "tsconfig.json")]).catch((error: { stdout: string }) => error);
  expect(result.stdout).toBe("");
});

it("passes the conformance kit, run by the vitest installed beside the tarballs", async () => {
  const vitest = join(folder.dir, "node_modules", "vitest", "vitest.mjs");
  const report = join(folder.dir, "conformance.json");
  await folder.node([vitest, "run", "--root", target, "--reporter=json", `--outputFile=${report}`], { DATABASE_URL: db.current.url }).catch(() => {});
  const result = JSON.parse(await readFile(report, "utf8")) as {
    numTotalTests: number;
    numPassedTests: number;
    testResults: { assertionResults: { fullName: string; status: string }[] }[];
  };
  const tests = result.testResults.flatMap((file) => file.assertionResults);
  expect(tests.filter((test) => test.status !== "passed")).toEqual([]);
  expect(tests.every((test) => test.fullName.startsWith("Target conformance: memo"))).toBe(true);
  expect(result.numPassedTests).toBe(result.numTotalTests);
  // Every test the kit declares ran (none filtered out or skipped).
  const kit = await readFile(new URL("../../../packages/remote-session-core/src/testing/target-conformance.ts", import.meta.url), "utf8");
  expect(result.numTotalTests).toBe(kit.match(/^ {4}it\("/gm)!.length);
});
