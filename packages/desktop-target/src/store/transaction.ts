import { guardedReserve, type Queryable } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import type { HintPublisher, Hints } from "../wake/hints.js";

/** Where a transaction runs and where its hints go: a channel's database handle and its publisher. */
export interface TransactionScope {
  readonly sql: Sql;
  readonly publisher: HintPublisher;
}

/**
 * Runs `fn` in a transaction whose BEGIN travels with `fn`'s first statements: one round trip
 * fewer than `sql.begin`, which waits for BEGIN's answer before running anything. On the hot
 * runner routes a round trip costs more than the statement it carries. Any error rolls back.
 * The hints `fn` gathers (its second argument) leave through `scope.publisher` after the commit,
 * never inside the transaction. The connection is reserved through `guardedReserve`: a connection
 * lost mid-transaction (a PostgreSQL restart) fails `fn` and the commit with an error, never the process.
 */
export async function transaction<T>(scope: TransactionScope, fn: (tx: Queryable, hints: Hints) => Promise<T>): Promise<T> {
  const tx = await guardedReserve(scope.sql);
  const gathered = scope.publisher.gather();
  let open = true;
  try {
    const begun = tx`begin`.execute();
    // Its failure (a lost connection) fails the statements after it too; fn's error is the one thrown.
    begun.catch(() => {});
    const result = await fn(tx as unknown as Queryable, gathered.hints);
    await begun;
    open = false;
    await tx`commit`;
    gathered.publish();
    return result;
  } catch (error) {
    gathered.discard();
    if (open) await tx`rollback`.catch(() => {});
    throw error;
  } finally {
    tx.release();
  }
}
