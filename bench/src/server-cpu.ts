// The server's CPU per task: what the gateway process and the PostgreSQL cluster spend while 16
// runners (a process of their own: runners are members' machines) drain N store-and-forward tasks
// with protocol 3, beside what graphile-worker (its process and the same cluster) spends per no-op
// job in the same run. The runners' CPU is reported apart: it is not the server's.
import postgres from "postgres";
import { startProfile } from "./cpu-profile.js";
import { benchGateway } from "./gateway-fixture.js";
import { drainGraphileWorker } from "./graphile-baseline.js";
import { benchDatabase, report } from "./harness.js";
import { clusterCpuMs, cpuMsSince, perTask, postmasterOf, serverCpuColumns } from "./process-cpu.js";
import { drainThroughRunners } from "./runner-drain.js";
import { walBytesSince } from "./wal-volume.js";

const TASKS = Number(process.env.TASKS ?? 4_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
// A drain of each side first, not counted: a gateway runs for days, so the figure is its steady
// state (JIT-compiled, prepared statements, warm caches), not its first minute. Ours counts its
// statements then, per variant: the counting hook (postgres.js `debug`) builds an Error with its
// stack for every statement, which would add to the CPU measured.
const WARMUP = Number(process.env.WARMUP ?? 1_000);
const RUNNERS = 16;

/** What drains add up to: tasks, the CPU ms of each side, seconds, requests and the gateway's statements. */
interface Drain {
  done: number;
  seconds: number;
  gatewayMs: number;
  clusterMs: number;
  runnersMs: number;
  requests: number;
  statements: number;
  postmaster: number;
  walBytes: number;
}

const emptyDrain = (): Drain => ({ done: 0, seconds: 0, gatewayMs: 0, clusterMs: 0, runnersMs: 0, requests: 0, statements: 0, postmaster: 0, walBytes: 0 });
const addDrains = (a: Drain, b: Drain): Drain => ({
  done: a.done + b.done,
  seconds: a.seconds + b.seconds,
  gatewayMs: a.gatewayMs + b.gatewayMs,
  clusterMs: a.clusterMs + b.clusterMs,
  runnersMs: a.runnersMs + b.runnersMs,
  requests: a.requests + b.requests,
  statements: a.statements + b.statements,
  postmaster: b.postmaster,
  walBytes: a.walBytes + b.walBytes,
});
const rowOf = (total: Drain, counted: Drain) => ({
  tasks: total.done,
  seconds: +total.seconds.toFixed(2),
  ...serverCpuColumns(total.gatewayMs, total.clusterMs, total.done),
  "runners µs/task (not the server's)": perTask(total.runnersMs, total.done),
  requestsPerTask: +(total.requests / total.done).toFixed(2),
  statementsPerTask: +(counted.statements / counted.done).toFixed(2),
  "WAL bytes/task": Math.round(total.walBytes / total.done),
});

const db = await benchDatabase("server-cpu");
const rows: Record<string, Record<string, unknown>> = {};
const OURS = "ours: gateway + PostgreSQL, protocol 3";
try {
  // The same drain with the registration cache off (every runner request read the registration,
  // as before #31.4) and at its default (1 s), ROUNDS times each, the order alternating: a later
  // drain runs on a table with more finished tasks.
  const variants = [
    { label: `${OURS}, registration cache off`, registrationCacheMs: 0, total: emptyDrain(), counted: emptyDrain() },
    { label: `${OURS}, registration cache 1 s`, registrationCacheMs: 1_000, total: emptyDrain(), counted: emptyDrain() },
  ];
  let postmaster = 0;
  for (const variant of variants) variant.counted = await drainOurs(variant.registrationCacheMs, { tasks: Math.max(WARMUP, 100), counted: true });
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const drained = await drainOurs(variant.registrationCacheMs, { tasks: TASKS, counted: false });
      variant.total = addDrains(variant.total, drained);
      postmaster = drained.postmaster;
    }
  }
  for (const { label, total, counted } of variants) rows[label] = rowOf(total, counted);
  if (WARMUP > 0) await drainGraphileWorker(db.url, WARMUP, RUNNERS, () => () => undefined);
  const admin = postgres(db.url, { max: 1, onnotice: () => {} });
  const { processed, seconds, metered } = await drainGraphileWorker(db.url, TASKS, RUNNERS, async () => {
    const wal = await walBytesSince(admin);
    const workerStart = process.cpuUsage();
    const clusterStart = clusterCpuMs(postmaster);
    return async () => {
      const cpu = { workerMs: cpuMsSince(workerStart), clusterMs: clusterCpuMs(postmaster) - clusterStart };
      return { ...cpu, walBytes: await wal() };
    };
  });
  await admin.end();
  const { workerMs, clusterMs: graphileClusterMs, walBytes } = metered;
  rows["baseline: graphile-worker + PostgreSQL, no-op jobs"] = {
    tasks: processed,
    seconds: +seconds.toFixed(2),
    ...serverCpuColumns(workerMs, graphileClusterMs, processed),
    "WAL bytes/task": Math.round(walBytes / processed),
  };
  for (const label of Object.keys(rows).filter((key) => key.startsWith(OURS))) {
    const ratio = (column: string) =>
      +((rows[label]![column] as number) / (rows["baseline: graphile-worker + PostgreSQL, no-op jobs"]![column] as number)).toFixed(2);
    rows[`ratio (${label.slice(OURS.length + 2)} / graphile-worker)`] = {
      "server µs/task": ratio("server µs/task"),
      "WAL bytes/task": ratio("WAL bytes/task"),
    };
  }
} finally {
  await db.stop();
}

/** Queues `tasks` tasks through a fresh gateway and has 16 runners (a process of their own) drain them; CPU over the drain only; statements only when `counted`. */
async function drainOurs(registrationCacheMs: number, { tasks, counted }: { tasks: number; counted: boolean }): Promise<Drain> {
  let statements = 0;
  const fixture = await benchGateway(db.url, { timings: { registrationCacheMs } }, counted ? () => statements++ : undefined);
  const postmaster = await postmasterOf(fixture.sql);
  const tokens = await Promise.all(Array.from({ length: RUNNERS }, (_, i) => fixture.runnerToken(`bench-cpu-${String(i).padStart(2, "0")}`)));
  await fixture.queueTasks(tasks);
  // PROFILE=<path>: a CPU profile of the gateway over each drain (it runs in this process).
  const profiling = process.env.PROFILE ? await startProfile() : null;
  const wal = await walBytesSince(fixture.sql);
  const gatewayStart = process.cpuUsage();
  const clusterStart = clusterCpuMs(postmaster);
  const statementsStart = statements;
  const { reported, exited } = drainThroughRunners(fixture.gateway.baseUrl, tokens);
  const outcome = await reported;
  const drained: Drain = {
    done: outcome.done,
    seconds: outcome.seconds,
    gatewayMs: cpuMsSince(gatewayStart),
    clusterMs: clusterCpuMs(postmaster) - clusterStart,
    runnersMs: outcome.cpuMs,
    requests: outcome.requests,
    statements: statements - statementsStart,
    postmaster,
    walBytes: await wal(),
  };
  await profiling?.(`${process.env.PROFILE}-cache-${registrationCacheMs}.cpuprofile`);
  await exited;
  await fixture.close();
  return drained;
}

await report("server-cpu", db.server, rows, [
  `each side drained ${WARMUP} tasks first, not counted (WARMUP): the figures are the steady state. Ours counted its statements in that drain (one per variant; the counting hook costs CPU of its own), and its measured drains ran without the hook.`,
  "CPU time from /proc: the process (user + system, every thread) and the PostgreSQL cluster (postmaster, live backends, reaped backends, background writers) over the drain only; tasks were queued beforehand (through the capability, for ours; addJob, for graphile-worker).",
  `ours: 16 runner clients (ky) in a process of their own over HTTP on 127.0.0.1, protocol 3 (each complete carries the events and claims the next task), with the registration cache off (registrationCacheMs 0) and at its default (1 s), ${ROUNDS} drains of ${TASKS} tasks each, the order alternating (rows: their sums); statements are the gateway's pool's, over the counted drain. graphile-worker 0.16.6: one worker, concurrency 16, in this process, no network hop.`,
]);
process.exit(0);
