// Presence and heartbeat writes, HOT or not: the same updates (a runner marked seen, a lease
// extended) over the same rows, with the indexes before migration 0009 (baseline: last_seen_at
// and lease_expires_at indexed, default fillfactor) and with 0009's. Share of heap-only updates
// and time per update, from pg_stat_user_tables, one connection, same run.
import { migrateDesktopTarget } from "@openwork/desktop-target";
import postgres from "postgres";
import { benchDatabase, report } from "./harness.js";

const TASKS = Number(process.env.TASKS ?? 5_000);
const RUNNERS = Number(process.env.RUNNERS ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const db = await benchDatabase("hot_updates");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  await migrateDesktopTarget(sql);
  const layouts = {
    "before 0009 (baseline): last_seen_at and lease_expires_at indexed, fillfactor 100": async () => {
      await sql`drop index if exists desktop_runner_member`;
      await sql`drop index if exists desktop_task_claimed`;
      await sql`create index desktop_runner_member_seen on desktop_runner (organization_id, member_id, last_seen_at desc)`;
      await sql`create index desktop_task_lease on desktop_task (lease_expires_at) where state = 'claimed'`;
      await sql`alter table desktop_runner reset (fillfactor)`;
      await sql`alter table desktop_task reset (fillfactor)`;
    },
    "migration 0009": async () => {
      await sql`drop index if exists desktop_runner_member_seen`;
      await sql`drop index if exists desktop_task_lease`;
      await sql`create index desktop_runner_member on desktop_runner (organization_id, member_id)`;
      await sql`create index desktop_task_claimed on desktop_task (claimed_at) where state = 'claimed'`;
      await sql`alter table desktop_runner set (fillfactor = 85)`;
      await sql`alter table desktop_task set (fillfactor = 85)`;
    },
  };
  const counters = async (table: string) => {
    await sql`select pg_stat_force_next_flush()`;
    await sql`select pg_sleep(0.05)`;
    await sql`select pg_stat_clear_snapshot()`;
    const [row] = await sql<{ upd: number; hot: number; indexes: number }[]>`
      select n_tup_upd::int as upd, n_tup_hot_upd::int as hot, pg_indexes_size(relid)::int as indexes from pg_stat_user_tables where relname = ${table}`;
    return row!;
  };
  const measure = async (table: string, update: (i: number) => Promise<unknown>, count: number) => {
    const before = await counters(table);
    const t0 = performance.now();
    for (let round = 0; round < ROUNDS; round++) for (let i = 0; i < count; i++) await update(i);
    const perUpdateUs = ((performance.now() - t0) * 1000) / (ROUNDS * count);
    const after = await counters(table);
    const updates = after.upd - before.upd;
    return {
      updates,
      hot: after.hot - before.hot,
      hotShare: `${Math.round((100 * (after.hot - before.hot)) / Math.max(1, updates))} %`,
      perUpdateUs: Math.round(perUpdateUs),
      indexGrowthKiB: Math.round((after.indexes - before.indexes) / 1024),
    };
  };
  for (const [label, layout] of Object.entries(layouts)) {
    await sql`truncate desktop_task, desktop_runner, remote_session cascade`;
    await layout();
    await sql`
      insert into desktop_runner (runner_id, organization_id, member_id, name, platform, app_version, protocol_version, capabilities)
      select 'bench-runner-' || lpad(i::text, 6, '0'), 'org_hot', 'mem_' || (i % 200), 'runner', 'linux', 'bench', 3, '{}' from generate_series(1, ${RUNNERS}) as i`;
    await sql`
      insert into remote_session (id, organization_id, user_id, target, title, state)
      select 'rs_' || lpad(i::text, 26, '0'), 'org_hot', 'user_hot', 'desktop', 'hot', 'running' from generate_series(1, ${TASKS}) as i`;
    await sql`
      insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities,
        claim_deadline, claimed_by_runner_id, attempt, claimed_at, lease_expires_at)
      select 'rst_' || lpad(i::text, 26, '0'), 'org_hot', 'mem_' || (i % 200), 'rs_' || lpad(i::text, 26, '0'), 'remote_session.create', 'claimed', 'hot', 3, '{}',
        now() + interval '1 hour', 'bench-runner-' || lpad((i % ${RUNNERS} + 1)::text, 6, '0'), 1, now(), now() + interval '30 seconds'
      from generate_series(1, ${TASKS}) as i`;
    await sql`vacuum analyze desktop_task`;
    await sql`vacuum analyze desktop_runner`;
    const taskId = (i: number) => `rst_${String(i + 1).padStart(26, "0")}`;
    const runnerId = (i: number) => `bench-runner-${String(i + 1).padStart(6, "0")}`;
    rows[`heartbeat (lease extended) — ${label}`] = await measure(
      "desktop_task",
      (i) => sql`update desktop_task set lease_expires_at = now() + interval '30 seconds', updated_at = now() where id = ${taskId(i)} and state = 'claimed'`,
      TASKS,
    );
    rows[`presence (runner seen) — ${label}`] = await measure(
      "desktop_runner",
      (i) =>
        sql`update desktop_runner set last_seen_at = now(), disconnected_at = null where organization_id = 'org_hot' and member_id = ${`mem_${(i + 1) % 200}`} and runner_id = ${runnerId(i)}`,
      RUNNERS,
    );
  }
  await sql.end();
} finally {
  await db.stop();
}
await report("hot-updates", db.server, rows, [
  `${TASKS} claimed tasks and ${RUNNERS} runners, ${ROUNDS} rounds of one update each, one connection, sequential; hot = heap-only updates (no index entry written), from pg_stat_user_tables; indexGrowthKiB: what the table's indexes grew by during the updates. The statements are the heartbeat's and the presence write's.`,
]);
process.exit(0);
