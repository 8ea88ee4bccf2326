import type postgres from "postgres";

/** A postgres.js client or a transaction of one: every ledger statement runs on either. */
// postgres.js types its clients with `{}` as "no custom types"; match it exactly.
export type Queryable = postgres.ISql<{}>;
