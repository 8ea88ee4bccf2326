import { guardedReserve } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import type { HintPublisher, Hints } from "../wake/hints.js";

/** Where a transaction runs and where its hints go: a channel's database handle and its publisher. */
export interface TransactionScope {
  readonly sql: Sql;
  readonly publisher: HintPublisher;
}

/**
 * Sends COMMIT now, behind the statements already started, in their round trip: it resolves
 * once the transaction committed, and rejects when it rolled back instead (a statement before it
 * failed; that statement's own error is the one to report). The statements before it must have
 * been handed to the connection (`.execute()`): a query that is only awaited is sent a microtask
 * later, behind the COMMIT. And every check of the transaction must fail inside PostgreSQL: a
 * check of a statement's answer comes after the COMMIT.
 */
export type Commit = () => Promise<void>;

/** Where a transaction stands: open, its COMMIT sent (by `fn`, or after it), or over. */
type Ending = { kind: "open" } | { kind: "committing"; committed: Promise<void> };

/**
 * Runs `fn` in a transaction whose BEGIN travels with `fn`'s first statements: one round trip
 * fewer than `sql.begin`, which waits for BEGIN's answer before running anything. On the hot
 * runner routes a round trip costs more than the statement it carries. `fn` may send COMMIT with
 * its last statements (its third argument): one round trip fewer again; otherwise COMMIT follows
 * its return. Any error rolls back. The hints `fn` gathers (its second argument) leave through
 * `scope.publisher` once the transaction committed, never inside it. The connection is reserved
 * through `guardedReserve`: a connection lost mid-transaction (a PostgreSQL restart) fails `fn`
 * and the commit with an error, never the process.
 */
export async function transaction<T>(scope: TransactionScope, fn: (tx: Queryable, hints: Hints, commit: Commit) => Promise<T>): Promise<T> {
  const tx = await guardedReserve(scope.sql);
  const gathered = scope.publisher.gather();
  // Set inside `commit`, which TypeScript cannot follow from here: widened on purpose.
  let ending = { kind: "open" } as Ending;
  const commit: Commit = () => {
    if (ending.kind === "committing") return ending.committed;
    const committed = tx`commit`.execute().then(({ command }) => {
      // PostgreSQL answers the COMMIT of an aborted transaction with ROLLBACK, not an error.
      if (command !== "COMMIT") throw new Error("the transaction rolled back: a statement before its COMMIT failed");
    });
    // Whoever sent it awaits it; a failure seen only by the catch below is not unhandled.
    committed.catch(() => {});
    ending = { kind: "committing", committed };
    return committed;
  };
  try {
    const begun = tx`begin`.execute();
    // Its failure (a lost connection) fails the statements after it too; fn's error is the one thrown.
    begun.catch(() => {});
    const result = await fn(tx as unknown as Queryable, gathered.hints, commit);
    await begun;
    await commit();
    gathered.publish();
    return result;
  } catch (error) {
    if (ending.kind === "open") {
      gathered.discard();
      await tx`rollback`.catch(() => {});
    } else {
      // fn failed after sending COMMIT: what committed is still announced.
      const committed = await ending.committed.then(
        () => true,
        () => false,
      );
      committed ? gathered.publish() : gathered.discard();
    }
    throw error;
  } finally {
    tx.release();
  }
}
