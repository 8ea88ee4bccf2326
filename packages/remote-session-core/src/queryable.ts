import type postgres from "postgres";

/** A postgres.js client or a transaction of one: every ledger statement runs on either. */
// postgres.js types its clients with `{}` as "no custom types"; match it exactly.
// biome-ignore lint/complexity/noBannedTypes: postgres.js's own type parameter for a client without custom types
export type Queryable = postgres.ISql<{}>;

/** Runs `run` in a transaction of its own, or as part of the one `sql` already is. */
export function inTransaction<T>(sql: Queryable, run: (tx: Queryable) => Promise<T>): Promise<T> {
  return "begin" in sql ? (sql as unknown as { begin<R>(fn: (tx: Queryable) => Promise<R>): Promise<R> }).begin(run) : run(sql);
}
