// Claim throughput: 16 runners doing claim → heartbeat → events → complete through the HTTP
// routes, tasks per second; beside graphile-worker with 16 concurrent workers on the same Postgres.
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { drainAsRunner, drainWithClaimNext } from "./drain-as-runner.js";
import { benchDatabase, report } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const TASKS = Number(process.env.TASKS ?? 2_000);
const RUNNERS = 16;
const quiet = new Logger(() => () => {});

const db = await benchDatabase("throughput");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const clients = await Promise.all(Array.from({ length: RUNNERS }, (_, i) => fixture.runnerClient(`bench-throughput-${String(i).padStart(2, "0")}`)));
  // Enqueue through the desktop target (store-and-forward: any of the member's runners may claim).
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  const enqueue = async () => {
    for (let i = 0; i < TASKS; i++) {
      const result = await fixture.execute("remote-session:create", { target: "desktop", title: `t${i}`, deliverBy });
      if (result.isError) throw new Error(result.content[0]?.text);
    }
  };
  const drain = async (label: string, loop: typeof drainAsRunner, requestsPerTask: number) => {
    await enqueue();
    const requestsBefore = fixture.runnerRequests();
    const started = performance.now();
    const outcomes = await Promise.all(clients.map((client) => loop(client)));
    const done = outcomes.reduce((n, o) => n + o.done, 0);
    const conflicts = outcomes.reduce((n, o) => n + o.conflicts, 0);
    const seconds = (performance.now() - started) / 1000;
    const requests = fixture.runnerRequests() - requestsBefore;
    rows[label] = { tasks: done, seconds: +seconds.toFixed(2), perSecond: Math.round(done / seconds), requestsPerTask: +(requests / done).toFixed(2), nominal: requestsPerTask, claimConflicts: conflicts };
  };
  await drain("ours, protocol 2: work → claim → heartbeat → events → complete", drainAsRunner, 5);
  await drain("ours, protocol 3: claim-next → complete with events", drainWithClaimNext, 2);
  await fixture.close();

  const utils = await makeWorkerUtils({ connectionString: db.url, logger: quiet });
  await utils.migrate();
  for (let i = 0; i < TASKS; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, TASKS - i) }, () => utils.addJob("noop", {})));
  }
  let processed = 0;
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const t0 = performance.now();
  const runner = await run({
    connectionString: db.url,
    concurrency: RUNNERS,
    noHandleSignals: true,
    logger: quiet,
    taskList: {
      noop: async () => {
        if (++processed === TASKS) finish();
      },
    },
  });
  await allDone;
  const graphileSeconds = (performance.now() - t0) / 1000;
  rows["graphile-worker, 16 concurrent, no-op jobs"] = { tasks: processed, seconds: +graphileSeconds.toFixed(2), perSecond: Math.round(processed / graphileSeconds) };
  await runner.stop();
  await utils.release();
} finally {
  await db.stop();
}
await report("throughput", db.server, rows, [
  "ours: 16 runner clients in one process. Protocol 2: a work listing, then claim, heartbeat, events, complete (5 requests, 4 write transactions). Protocol 3: claim-next, then complete carrying the events (2 requests, 2 write transactions). requestsPerTask counts every runner request the gateway answered, the final empty look included.",
  "graphile-worker 0.16.6: jobs queued beforehand with addJob, then one worker with concurrency 16 runs no-op tasks (no network hop).",
]);
process.exit(0);
