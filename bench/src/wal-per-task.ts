// What a task makes PostgreSQL write, record by record: one runner drains N store-and-forward
// tasks (protocol 3) after a drain of N that is not counted, and pg_walinspect sums the WAL of the
// drain by record type and by relation, per task. Beside it, graphile-worker's WAL per no-op job.
// Unlike CPU time, these counts do not move with what else the machine runs.
import { createRunnerClient } from "@openwork/runner-protocol/client";
import postgres, { type Sql } from "postgres";
import { drainWithClaimNext } from "./drain-as-runner.js";
import { benchGateway } from "./gateway-fixture.js";
import { drainGraphileWorker } from "./graphile-baseline.js";
import { benchDatabase, report } from "./harness.js";

const N = Number(process.env.N ?? 1_000);

const lsnOf = async (sql: Sql) => (await sql<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`)[0]!.lsn;

/** The WAL between two positions, per task: by record type, and by the relation its first block names. */
async function walRows(sql: Sql, from: string, to: string, tasks: number, rows: Record<string, Record<string, unknown>>, side: string) {
  const records = await sql<{ record: string; count: number; bytes: number }[]>`
    select "resource_manager/record_type" as record, count::int, combined_size::int as bytes
    from pg_get_wal_stats(${from}::pg_lsn, ${to}::pg_lsn, true) where count > 0 order by combined_size desc`;
  const total = records.reduce((sum, r) => sum + r.bytes, 0);
  rows[`${side}: all WAL`] = { "records/task": +(records.reduce((sum, r) => sum + r.count, 0) / tasks).toFixed(2), "bytes/task": Math.round(total / tasks) };
  for (const r of records.slice(0, 8))
    rows[`${side}: ${r.record}`] = { "records/task": +(r.count / tasks).toFixed(2), "bytes/task": Math.round(r.bytes / tasks) };
  const relations = await sql<{ relation: string; record: string; count: number }[]>`
    select coalesce(c.relname, '(other)') as relation, w.record_type as record, count(*)::int as count
    from pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn) w
    left join pg_class c on c.relfilenode = (regexp_match(w.block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid
    where w.resource_manager in ('Heap', 'Heap2', 'Btree')
    group by 1, 2 order by 3 desc limit 12`;
  for (const r of relations) rows[`${side}: ${r.relation} ${r.record}`] = { "records/task": +(r.count / tasks).toFixed(2) };
}

const db = await benchDatabase("wal-per-task");
const admin = postgres(db.url, { max: 1, onnotice: () => {} });
const rows: Record<string, Record<string, unknown>> = {};
try {
  await admin`create extension if not exists pg_walinspect`;
  for (const counted of [false, true]) {
    const queueing = await benchGateway(db.url);
    await queueing.queueTasks(N);
    await queueing.close();
    const draining = await benchGateway(db.url);
    const client = createRunnerClient({ baseUrl: draining.gateway.baseUrl, token: await draining.runnerToken(`runner-wal-${counted ? "counted" : "warm"}`) });
    const from = await lsnOf(admin);
    const { done } = await drainWithClaimNext(client);
    const to = await lsnOf(admin);
    await draining.close();
    if (counted) await walRows(admin, from, to, done, rows, "ours");
  }
  let from = "";
  const { processed, metered: to } = await drainGraphileWorker(db.url, N, 1, async () => {
    from = await lsnOf(admin);
    return () => lsnOf(admin);
  });
  await walRows(admin, from, to, processed, rows, "graphile-worker");
} finally {
  await admin.end();
  await db.stop();
}
await report("wal-per-task", db.server, rows, [
  `ours: one runner drains ${N} tasks (two events and a completion each, protocol 3) after a drain of ${N} not counted; graphile-worker 0.16.6: one worker, concurrency 1, ${N} no-op jobs. WAL of the drain only, every process's (autovacuum's too), from pg_walinspect.`,
]);
process.exit(0);
