import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

// `npm start` builds without declaration files (BUILD_DECLARATIONS=0). Such a build must have
// cache keys of its own: restored in place of the full build, it would leave the type-checks of
// dependents (which read dist/*.d.ts) without declarations.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TURBO = fileURLToPath(new URL("../../../node_modules/.bin/turbo", import.meta.url));

/** turbo's hash of each build task of the gateway's graph, under the given extra environment. */
async function buildHashes(extra: Record<string, string>): Promise<Map<string, string>> {
  const env: NodeJS.ProcessEnv = { ...process.env, TURBO_TELEMETRY_DISABLED: "1" };
  delete env.BUILD_DECLARATIONS;
  Object.assign(env, extra);
  const { stdout } = await run(TURBO, ["run", "build", "--filter=@openwork/gateway...", "--dry=json"], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  const plan = JSON.parse(stdout) as { tasks: { taskId: string; hash: string }[] };
  return new Map(plan.tasks.map((task) => [task.taskId, task.hash]));
}

it("gives every build task of the start (no declarations) another cache key than the full build", async () => {
  const full = await buildHashes({});
  const start = await buildHashes({ BUILD_DECLARATIONS: "0" });
  expect([...start.keys()].sort()).toEqual([...full.keys()].sort());
  expect(start.size).toBeGreaterThan(5);
  for (const [task, hash] of full) expect(start.get(task), task).not.toBe(hash);
});
