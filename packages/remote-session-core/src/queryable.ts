import type postgres from "postgres";

/** A postgres.js client or a transaction of one: every ledger statement runs on either. */
// postgres.js types its clients with `{}` as "no custom types"; match it exactly.
// biome-ignore lint/complexity/noBannedTypes: postgres.js's own type parameter for a client without custom types
export type Queryable = postgres.ISql<{}>;
