// What parts of a task PostgreSQL spends its CPU on: one runner drains N store-and-forward tasks
// in sequence (protocol 3), once per variant, each on a fresh gateway over the same database,
// with one part of the schema's work switched off. The first variant warms the process up.
//   base       the schema as migrated
//   notrigger  the notification trigger on remote_session disabled
//   narrow     that trigger fired only by the moves it can enqueue for (not the claim's → running)
//   nosync     synchronous_commit off (no WAL flush waited for at each commit)
//   generic    plan_cache_mode = force_generic_plan (every statement on its cached generic plan)
//   custom     plan_cache_mode = force_custom_plan (every statement planned again at each run)
//   nochecks   every CHECK constraint of the four hot tables dropped (for good: name it last)
// VARIANTS=base,notrigger,… picks them (default: warm,base,notrigger,narrow,nosync,base,nochecks).
import { createRunnerClient } from "@openwork/runner-protocol/client";
import postgres, { type Sql } from "postgres";
import { drainWithClaimNext } from "./drain-as-runner.js";
import { benchGateway } from "./gateway-fixture.js";
import { benchDatabase, report } from "./harness.js";
import { clusterCpuMs, cpuMsSince, postmasterOf } from "./process-cpu.js";

const N = Number(process.env.N ?? 1_000);
const VARIANTS = (process.env.VARIANTS ?? "warm,base,notrigger,narrow,nosync,base,nochecks").split(",");
const TRIGGER = "notify_session_state_change";
const PLAN_MODES: Record<string, string> = { generic: "force_generic_plan", custom: "force_custom_plan" };
const HOT_TABLES = ["desktop_task", "desktop_task_event", "remote_session", "desktop_runner"];

/** Puts the schema in `variant`'s shape: the trigger as migrated (or narrowed, or off), commits synchronous (or not), checks dropped. */
async function shape(admin: Sql, database: string, variant: string): Promise<void> {
  const when = variant === "narrow" ? "and (new.state not in ('queued', 'running') or old.state = 'waiting_input')" : "";
  await admin.unsafe(`drop trigger ${TRIGGER} on remote_session`);
  await admin.unsafe(
    `create trigger ${TRIGGER} after update of state on remote_session for each row when (old.state is distinct from new.state ${when}) execute function ${TRIGGER}()`,
  );
  await admin.unsafe(`alter table remote_session ${variant === "notrigger" ? "disable" : "enable"} trigger ${TRIGGER}`);
  await admin.unsafe(`alter database ${database} set synchronous_commit = ${variant === "nosync" ? "off" : "on"}`);
  await admin.unsafe(`alter database ${database} set plan_cache_mode = ${PLAN_MODES[variant] ?? "auto"}`);
  if (variant !== "nochecks") return;
  const checks = await admin<{ rel: string; name: string }[]>`
    select conrelid::regclass::text as rel, conname as name from pg_constraint
    where contype = 'c' and conrelid::regclass::text = any(${HOT_TABLES}::text[])`;
  for (const { rel, name } of checks) await admin.unsafe(`alter table ${rel} drop constraint ${name}`);
}

const db = await benchDatabase("server-cpu-parts");
const database = new URL(db.url).pathname.slice(1);
const rows: Record<string, Record<string, unknown>> = {};
try {
  for (const [index, variant] of VARIANTS.entries()) {
    // Queued through one gateway; drained through a second, whose connections start after the shape.
    const queueing = await benchGateway(db.url);
    const admin = postgres(db.url, { max: 1, onnotice: () => {} });
    await shape(admin, database, variant);
    await admin.end();
    await queueing.queueTasks(N);
    await queueing.close();
    // No statement counter: its hook (postgres.js `debug`) costs CPU of its own.
    const draining = await benchGateway(db.url);
    const postmaster = await postmasterOf(draining.sql);
    const client = createRunnerClient({ baseUrl: draining.gateway.baseUrl, token: await draining.runnerToken(`runner-parts-${index}`) });
    const clusterStart = clusterCpuMs(postmaster);
    const processStart = process.cpuUsage();
    const started = performance.now();
    const { done } = await drainWithClaimNext(client);
    rows[`${index + 1}. ${variant}`] = {
      tasks: done,
      seconds: +((performance.now() - started) / 1000).toFixed(2),
      "PostgreSQL µs/task": Math.round(((clusterCpuMs(postmaster) - clusterStart) * 1000) / done),
      "gateway + runner µs/task": Math.round((cpuMsSince(processStart) * 1000) / done),
    };
    await draining.close();
  }
} finally {
  await db.stop();
}
await report("server-cpu-parts", db.server, rows, [
  `one runner (in this process, with the gateway) drains ${N} tasks per variant in sequence; CPU from /proc over the drain: the PostgreSQL cluster, and this process (gateway and runner together).`,
  "variants run in the order listed, on one database that grows; nochecks drops the checks for good, so it runs last.",
]);
process.exit(0);
