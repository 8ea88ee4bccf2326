// Where PostgreSQL's CPU per task goes, statement by statement: the server-cpu drain (protocol 3,
// RUNNERS runner clients in a process of their own) on an embedded PostgreSQL with
// pg_stat_statements (planning tracked) and function tracking, beside the cluster's CPU per task
// from /proc over the same drain. With RUNNERS=1 nothing waits on anything, so a statement's time
// is close to its CPU; with 16, times include waiting for a core. PLAN_MODE sets plan_cache_mode
// for the database (auto, force_generic_plan, force_custom_plan), LOCALE its collation. With
// DATABASE_URL, a cluster of the host's (pg_stat_statements preloaded, track_planning on, the
// role a superuser) instead of the embedded one. A diagnosis, not a budget.
import postgres from "postgres";
import { benchGateway } from "./gateway-fixture.js";
import { benchDatabase, report } from "./harness.js";
import { clusterCpuMs, perTask, postmasterOf } from "./process-cpu.js";
import { drainThroughRunners } from "./runner-drain.js";

const TASKS = Number(process.env.TASKS ?? 2_000);
const WARMUP = Number(process.env.WARMUP ?? 500);
const RUNNERS = Number(process.env.RUNNERS ?? 1);
const PLAN_MODE = process.env.PLAN_MODE ?? "auto";
// LOCALE=C.UTF-8 (or another the machine has): the database's collation, as a host's database may
// have it; default the cluster's (C).
const LOCALE = process.env.LOCALE;
// NESTED=1: statements run inside functions are tracked too (their planning shows apart).
const TRACK = process.env.NESTED === "1" ? "all" : "top";

interface StatementRow {
  calls: number;
  plans: number;
  exec_ms: number;
  plan_ms: number;
  query: string;
}
interface FunctionRow {
  funcname: string;
  calls: number;
  self_ms: number;
  total_ms: number;
}

const external = process.env.DATABASE_URL !== undefined;
const db = await benchDatabase("statement_cost", {
  settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on", track_functions: "all" },
  locale: LOCALE,
});
const { database, url } = db;
const admin = postgres(db.adminUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`alter database ${database} set plan_cache_mode = ${PLAN_MODE}`);
await admin.unsafe(`alter database ${database} set track_functions = 'all'`);
await admin.unsafe(`alter database ${database} set pg_stat_statements.track = '${TRACK}'`);
await admin`create extension if not exists pg_stat_statements`;

/** Drains `tasks` tasks through a fresh gateway; the statistics are reset just before the drain. */
async function drain(tasks: number) {
  const fixture = await benchGateway(url);
  const tokens = await Promise.all(Array.from({ length: RUNNERS }, (_, i) => fixture.runnerToken(`bench-cost-${String(i).padStart(2, "0")}`)));
  await fixture.queueTasks(tasks);
  const local = postgres(url, { max: 1, onnotice: () => {} });
  const postmaster = await postmasterOf(local);
  await admin`select pg_stat_statements_reset()`;
  await local`select pg_stat_reset()`;
  const clusterStart = clusterCpuMs(postmaster);
  const { reported, exited } = drainThroughRunners(fixture.gateway.baseUrl, tokens);
  const { done } = await reported;
  const clusterMs = clusterCpuMs(postmaster) - clusterStart;
  const statements = await admin<StatementRow[]>`
    select sum(s.calls)::int as calls, sum(s.plans)::int as plans, sum(s.total_exec_time) as exec_ms, sum(s.total_plan_time) as plan_ms,
      left(regexp_replace(s.query, '\\s+', ' ', 'g'), 90) as query
    from pg_stat_statements s join pg_database d on d.oid = s.dbid
    where d.datname = ${database} and s.query not like '%pg_stat%'
    -- Statements that begin alike (a claim with or without the settle it carries) are one row.
    group by 5 order by sum(s.total_exec_time + s.total_plan_time) desc limit 12`;
  const functions = await local<FunctionRow[]>`
    select funcname, calls::int, self_time as self_ms, total_time as total_ms from pg_stat_user_functions order by total_time desc`;
  await local.end();
  await exited;
  await fixture.close();
  return { done, clusterMs, statements, functions };
}

const rows: Record<string, Record<string, unknown>> = {};
try {
  if (WARMUP > 0) await drain(WARMUP);
  const { done, clusterMs, statements, functions } = await drain(TASKS);
  const ofDrain = (ms: number) => perTask(ms, done);
  let executed = 0;
  for (const s of statements) {
    executed += s.exec_ms + s.plan_ms;
    rows[s.query] = {
      "calls/task": +(s.calls / done).toFixed(2),
      "plans/call": s.calls > 0 ? +(s.plans / s.calls).toFixed(2) : 0,
      "execution µs/task": ofDrain(s.exec_ms),
      "planning µs/task": ofDrain(s.plan_ms),
    };
  }
  for (const f of functions) {
    rows[`function ${f.funcname}`] = {
      "calls/task": +(f.calls / done).toFixed(2),
      "execution µs/task": ofDrain(f.total_ms),
      "of it its own µs/task": ofDrain(f.self_ms),
    };
  }
  rows["the statements above, executed and planned"] = { "execution µs/task": ofDrain(executed) };
  rows["baseline: the PostgreSQL cluster's CPU over the drain (/proc)"] = { "execution µs/task": ofDrain(clusterMs) };
} finally {
  await admin.end();
  await db.stop();
}

await report("statement-cost", `${db.server} (${external ? "DATABASE_URL" : "embedded"}, pg_stat_statements)`, rows, [
  `${RUNNERS} runner client(s) in a process of their own drain ${TASKS} tasks with protocol 3 after a drain of ${WARMUP} not counted; plan_cache_mode ${PLAN_MODE}; the database's locale ${LOCALE ?? "the cluster's (C)"}.`,
  "statement times from pg_stat_statements (wall time inside the backend: with more runners than cores it includes waiting for one), functions' from pg_stat_user_functions; the cluster's CPU from /proc over the same drain.",
]);
process.exit(0);
