import type { Sql } from "postgres";

/**
 * The WAL a drain makes the cluster write (every database, the background processes' too), in
 * bytes: a measure of the write work per task that, unlike CPU time, does not move with what else
 * the machine runs. Read once before (the returned function) and once after.
 */
export async function walBytesSince(sql: Sql): Promise<() => Promise<number>> {
  const [start] = await sql<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`;
  return async () => {
    const [row] = await sql<{ bytes: string }[]>`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${start!.lsn}::pg_lsn)::text as bytes`;
    return Number(row!.bytes);
  };
}
