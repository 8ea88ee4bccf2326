// Claim throughput: 16 runners doing claim → heartbeat → events → complete through the HTTP
// routes, tasks per second; beside graphile-worker with 16 concurrent workers on the same Postgres.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startProfile } from "./cpu-profile.js";
import { benchDatabase, report } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";
import { drainGraphileWorker } from "./graphile-baseline.js";

const TASKS = Number(process.env.TASKS ?? 2_000);
const RUNNERS = 16;

const db = await benchDatabase("throughput");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const tokens = await Promise.all(Array.from({ length: RUNNERS }, (_, i) => fixture.runnerToken(`bench-throughput-${String(i).padStart(2, "0")}`)));
  const drain = async (label: string, loop: "listed" | "next", requestsPerTask: number) => {
    await fixture.queueTasks(TASKS);
    const profiling = process.env.PROFILE ? await startProfile() : null;
    // The runners drain from a process of their own; tsx compiles it as it does this file.
    const runners = fork(fileURLToPath(new URL("./runner-process.ts", import.meta.url)), {
      execArgv: ["--import", "tsx", ...(process.env.PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROFILE}-runners`] : [])],
    });
    runners.send({ baseUrl: fixture.gateway.baseUrl, tokens, loop });
    const outcome = await new Promise<{ done: number; conflicts: number; requests: number; seconds: number }>((resolve, reject) => {
      runners.once("message", (message) => resolve(message as never));
      runners.once("exit", (code) => reject(new Error(`the runner process exited (${code})`)));
    });
    await new Promise((resolve) => runners.once("exit", resolve));
    await profiling?.(`${process.env.PROFILE}-${loop}.cpuprofile`);
    const { done, conflicts, requests, seconds } = outcome;
    rows[label] = {
      tasks: done,
      seconds: +seconds.toFixed(2),
      perSecond: Math.round(done / seconds),
      requestsPerTask: +(requests / done).toFixed(2),
      nominal: requestsPerTask,
      claimConflicts: conflicts,
    };
  };
  // ONLY=next measures protocol 3 alone (for a CPU profile of it).
  if (process.env.ONLY !== "next") await drain("ours, protocol 2: work → claim → heartbeat → events → complete", "listed", 5);
  await drain("ours, protocol 3: complete with events + claim of the next task", "next", 1);
  await fixture.close();

  const { processed, seconds } = await drainGraphileWorker(db.url, TASKS, RUNNERS, () => () => undefined);
  rows["graphile-worker, 16 concurrent, no-op jobs"] = { tasks: processed, seconds: +seconds.toFixed(2), perSecond: Math.round(processed / seconds) };
} finally {
  await db.stop();
}
await report("throughput", db.server, rows, [
  "ours: 16 runner clients in a process of their own (runners are other machines; the gateway's process runs the gateway only), over HTTP on 127.0.0.1. Protocol 2: a work listing, then claim, heartbeat, events, complete (5 requests, 4 write transactions). Protocol 3: each complete carries the attempt's events and claims the runner's next task (1 request, 2 write transactions; claim-next only to start and after an empty answer). requestsPerTask counts every runner request the gateway answered, the final empty look included.",
  "graphile-worker 0.16.6: jobs queued beforehand with addJob, then one worker with concurrency 16 runs no-op tasks (no network hop).",
]);
process.exit(0);
