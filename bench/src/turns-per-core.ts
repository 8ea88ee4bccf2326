// Turns per gateway core (#31, item 3): turns/s divided by the CPU seconds the gateway's process
// spent (from /proc), with P = 20 event posts per turn, beside the same turns with the runner's
// posts coalesced, in the same run. The gateway (its own process), the runners (another: 16
// runRunner loops, protocol 3, each turn streaming P text deltas STREAM_MS apart) and PostgreSQL
// share the machine; each configuration gets a fresh gateway process on the same cluster. The
// turns are queued through the capability inside the gateway's process (their create is part of
// the turn's cost), all at once (store-and-forward), and the runners drain them.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Coalescing, DEFAULT_COALESCING } from "@openwork/runner-protocol/client";
import postgres from "postgres";
import { benchDatabase, report, sleep } from "./harness.js";
import { clusterCpuMs, postmasterOf, processCpuMs } from "./process-cpu.js";

const P = Number(process.env.P ?? 20);
const TURNS = Number(process.env.TURNS ?? 320);
const STREAM_MS = Number(process.env.STREAM_MS ?? 25);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const RUNNERS = 16;

type Counts = { counts: Record<string, number>; ended: number; cpu: NodeJS.CpuUsage };

/** A forked child and a way to send it a message and wait for its answer. */
function child(module: string) {
  const process_ = fork(fileURLToPath(new URL(module, import.meta.url)), { execArgv: ["--import", "tsx"] });
  const ask = <T>(message: unknown) =>
    new Promise<T>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`${module} exited (${code})`));
      process_.once("exit", exited);
      process_.once("message", (answer) => {
        process_.off("exit", exited);
        resolve(answer as T);
      });
      process_.send(message as never);
    });
  const stopped = () => new Promise((resolve) => (process_.exitCode !== null ? resolve(null) : process_.once("exit", resolve)));
  return { process: process_, ask, stopped };
}

/** What the drains of one configuration add up to. */
interface Drain {
  turns: number;
  seconds: number;
  gatewaySeconds: number;
  clusterSeconds: number;
  statements: number;
  byRoute: Record<string, number>;
}

const emptyDrain = (): Drain => ({ turns: 0, seconds: 0, gatewaySeconds: 0, clusterSeconds: 0, statements: 0, byRoute: {} });
const addDrains = (a: Drain, b: Drain): Drain => ({
  turns: a.turns + b.turns,
  seconds: a.seconds + b.seconds,
  gatewaySeconds: a.gatewaySeconds + b.gatewaySeconds,
  clusterSeconds: a.clusterSeconds + b.clusterSeconds,
  statements: a.statements + b.statements,
  byRoute: Object.fromEntries(
    [...new Set([...Object.keys(a.byRoute), ...Object.keys(b.byRoute)])].map((route) => [route, (a.byRoute[route] ?? 0) + (b.byRoute[route] ?? 0)]),
  ),
});
const rowOf = (total: Drain) => {
  const perTurn = Object.entries(total.byRoute).map(([route, n]) => [route, +(n / total.turns).toFixed(2)] as const);
  return {
    turns: total.turns,
    "turns/s": +(total.turns / total.seconds).toFixed(1),
    "gateway CPU s": +total.gatewaySeconds.toFixed(2),
    "**turns per gateway CPU s**": +(total.turns / total.gatewaySeconds).toFixed(1),
    "PostgreSQL CPU s": +total.clusterSeconds.toFixed(2),
    "turns per server CPU s": +(total.turns / (total.gatewaySeconds + total.clusterSeconds)).toFixed(1),
    "statements/turn": +(total.statements / total.turns).toFixed(1),
    "runner requests/turn": +perTurn.reduce((sum, [, n]) => sum + n, 0).toFixed(2),
    byRoute: perTurn.map(([route, n]) => `${route} ${n}`).join(", "),
  };
};

const db = await benchDatabase("turns-per-core");
const rows: Record<string, Record<string, unknown>> = {};
const children: ChildProcess[] = [];
const admin = postgres(db.url, { max: 1, onnotice: () => {} });
const postmaster = await postmasterOf(admin);
try {
  const configs = [
    { label: `baseline: ${P} posts per turn, registration cache off (as before #31.4)`, coalescing: null, registrationCacheMs: 0 },
    { label: `${P} posts per turn, registration cache 1 s`, coalescing: null, registrationCacheMs: 1_000 },
    { label: "coalesced posts (runner default), registration cache off", coalescing: DEFAULT_COALESCING, registrationCacheMs: 0 },
    { label: "coalesced posts (runner default), registration cache 1 s", coalescing: DEFAULT_COALESCING, registrationCacheMs: 1_000 },
  ];
  // ROUNDS rounds, the order reversed every other one: a later drain finds more finished turns in
  // the tables, and PostgreSQL's autovacuum cleaning up after the one before.
  const totals = new Map(configs.map((config) => [config, emptyDrain()]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const config of round % 2 === 0 ? configs : [...configs].reverse()) totals.set(config, addDrains(totals.get(config)!, await drain(config)));
  }
  for (const config of configs) rows[config.label] = rowOf(totals.get(config)!);
  const baseline = rows[configs[0]!.label]!["**turns per gateway CPU s**"] as number;
  for (const config of configs.slice(1)) {
    rows[`ratio: ${config.label} / baseline`] = {
      "**turns per gateway CPU s**": +((rows[config.label]!["**turns per gateway CPU s**"] as number) / baseline).toFixed(2),
    };
  }
  await admin.end();
} finally {
  for (const process_ of children) if (process_.exitCode === null) process_.kill("SIGINT");
  await db.stop();
}
/** One configuration's drain: a fresh gateway process and runner process, TURNS turns queued and run; CPU over the drain. */
async function drain(config: { coalescing: Coalescing | null; registrationCacheMs: number }): Promise<Drain> {
  const gateway = child("./gateway-process.ts");
  children.push(gateway.process);
  const { baseUrl } = await gateway.ask<{ baseUrl: string }>({ databaseUrl: db.url, timings: { registrationCacheMs: config.registrationCacheMs } });
  const runnerIds = Array.from({ length: RUNNERS }, (_, i) => `bench-core-${String(i).padStart(2, "0")}`);
  const { tokens } = await gateway.ask<{ tokens: string[] }>({ mint: runnerIds });
  const runners = child("./streaming-runners.ts");
  children.push(runners.process);
  await runners.ask({ baseUrl, tokens, p: P, streamMs: STREAM_MS, coalescing: config.coalescing });
  // The runners' streams open and their first look finds nothing: not a turn's cost.
  await sleep(1_000);
  const before = await runners.ask<Counts>("counts");
  const statementsBefore = (await gateway.ask<{ statements: number }>("statements")).statements;
  const gatewayBefore = processCpuMs(gateway.process.pid!);
  const clusterBefore = clusterCpuMs(postmaster);
  const t0 = performance.now();
  await gateway.ask({ queue: TURNS, runners: runnerIds });
  let after = before;
  while (after.ended - before.ended < TURNS) {
    await sleep(50);
    after = await runners.ask<Counts>("counts");
  }
  const drained: Drain = {
    turns: after.ended - before.ended,
    seconds: (performance.now() - t0) / 1000,
    gatewaySeconds: (processCpuMs(gateway.process.pid!) - gatewayBefore) / 1000,
    clusterSeconds: (clusterCpuMs(postmaster) - clusterBefore) / 1000,
    statements: (await gateway.ask<{ statements: number }>("statements")).statements - statementsBefore,
    byRoute: Object.fromEntries(Object.entries(after.counts).map(([route, n]) => [route, n - (before.counts[route] ?? 0)])),
  };
  await runners.ask("stop").catch(() => {});
  await runners.stopped();
  gateway.process.send("stop");
  await gateway.stopped();
  return drained;
}

await report("turns-per-core", db.server, rows, [
  `${ROUNDS} × ${TURNS} turns per configuration (rows: their sums; the order reversed every other round), ${RUNNERS} runners (runRunner, protocol 3, wake streams) in a process of their own; each turn (pinned to one runner, round robin, so its wake hint reaches that runner alone) streams ${P} assistant.delta events ${STREAM_MS} ms apart, then the runner's terminal event rides on the completion. "${P} posts per turn": each delta emitted once the previous one's post was answered (no merge: exactly ${P} posts, the last one's too); "coalesced": the runner's default (first post at once, then 100 ms doubling to 1 s).`,
  "The gateway (bench fixture: the reference gateway's wiring) in a process of its own, a fresh one per configuration; turns queued through the capability in that process (create counted in its CPU). CPU from /proc over the drain: the gateway's process, and the PostgreSQL cluster (postmaster, live and reaped backends).",
]);
process.exit(0);
