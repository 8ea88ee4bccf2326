import type { PendingQuery, Row } from "postgres";
import { canonicalDigest } from "../digest.js";
import { fail } from "../errors/session-error.js";
import type { Queryable } from "../queryable.js";
import { announceSignal, waitForSignal } from "./idempotency-signal.js";
import type { OwnerScope } from "../target.js";

export interface IdempotencyOptions {
  /** How long a duplicate waits for the first call to finish. Default 60 s. */
  waitMs?: number;
  /** A pending claim older than this is presumed dead (its process crashed) and taken over. Default 120 s. */
  staleMs?: number;
  /** First pause between looks while waiting (a notification usually ends it first); doubles up to 1 s. Default 50 ms. */
  pollMs?: number;
  /**
   * Makes values the first attempt fixes and every retry of the same key reuses (a message id),
   * even when an attempt failed after its effect reached the target.
   */
  reserve?: () => Record<string, unknown>;
}

interface IdempotencyRow {
  args_digest: string;
  state: "pending" | "done" | "failed";
  result: unknown;
}

// A failed attempt whose mark did not take (the database was gone) marks it again, this often,
// for this long: a retry once the database is back takes the key over instead of waiting for the
// claim to go stale (120 s). After that, staleness alone frees it.
const REMARK_EVERY_MS = [250, 500, 1_000, 2_000, 5_000] as const;
const REMARK_FOR_MS = 120_000;

/**
 * Marks a failed attempt's key failed, so a retry runs it again. When the database refuses (the
 * connection that failed the attempt is what failed it), the mark is tried again in the
 * background until it takes, and the attempt's own error is the one its caller sees.
 */
async function markFailed(sql: Queryable, where: PendingQuery<Row[]>, signal: string, since = Date.now(), tries = 0): Promise<void> {
  try {
    await sql`update remote_session_idempotency set state = 'failed' where ${where} and state = 'pending'`;
    await announceSignal(sql, signal);
  } catch {
    if (Date.now() - since > REMARK_FOR_MS) return;
    const again = setTimeout(() => void markFailed(sql, where, signal, since, tries + 1), REMARK_EVERY_MS[Math.min(tries, REMARK_EVERY_MS.length - 1)]);
    again.unref();
  }
}

/**
 * Runs `run` once per (member, operation, key). The first caller claims the key by inserting a
 * row: the primary key settles concurrent duplicates, not timing. Later callers with the same
 * arguments get the stored result (`replayed: true`), with other arguments `remote_session_idempotency_conflict`.
 * A duplicate arriving while the first is still running waits for its result. If `run` throws,
 * the key is marked failed so a retry runs again — with the same reserved values.
 */
export async function runIdempotent<T>(
  sql: Queryable,
  scope: OwnerScope,
  request: { operation: "create" | "send" | "respond"; key: string; args: unknown },
  run: (reserved: Record<string, unknown> | null) => Promise<T>,
  options: IdempotencyOptions = {},
): Promise<{ result: T; replayed: boolean }> {
  const keyDigest = canonicalDigest(["key", request.key]);
  const argsDigest = canonicalDigest(request.args);
  const where = sql`
    organization_id = ${scope.organizationId} and user_id = ${scope.userId}
    and operation = ${request.operation} and key_digest = ${keyDigest}`;
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  const staleSeconds = (options.staleMs ?? 120_000) / 1000;

  const reserve = options.reserve?.() ?? null;
  // Waiters are woken by the finishing call's notification; the growing pause is only a backstop.
  const signal = canonicalDigest(["idempotency", scope.organizationId, scope.userId, request.operation, keyDigest]);
  let pauseMs = options.pollMs ?? 50;
  for (;;) {
    const claimed = await sql<{ reserved: Record<string, unknown> | null }[]>`
      insert into remote_session_idempotency (organization_id, user_id, operation, key_digest, args_digest, state, reserved)
      values (${scope.organizationId}, ${scope.userId}, ${request.operation}, ${keyDigest}, ${argsDigest}, 'pending',
              ${reserve ? sql.json(reserve as never) : null})
      on conflict do nothing
      returning reserved`;
    // A failed attempt, or one whose process died long ago, may be run again by this caller.
    const takenOver =
      claimed.length === 0
        ? await sql<{ reserved: Record<string, unknown> | null }[]>`
            update remote_session_idempotency set state = 'pending', claimed_at = now()
            where ${where} and args_digest = ${argsDigest}
              and (state = 'failed' or (state = 'pending' and claimed_at < now() - make_interval(secs => ${staleSeconds})))
            returning reserved`
        : [];
    const mine = claimed[0] ?? takenOver[0];
    if (mine) {
      let result: T;
      try {
        result = await run(mine.reserved);
      } catch (error) {
        await markFailed(sql, where, signal);
        throw error;
      }
      await sql`update remote_session_idempotency set state = 'done', result = ${sql.json(result as never)} where ${where}`;
      await announceSignal(sql, signal);
      return { result, replayed: false };
    }

    const [row] = await sql<IdempotencyRow[]>`select args_digest, state, result from remote_session_idempotency where ${where}`;
    if (row && row.args_digest !== argsDigest) {
      fail("remote_session_idempotency_conflict", `idempotency key was already used for a different ${request.operation}`);
    }
    if (row?.state === "done") return { result: row.result as T, replayed: true };
    if (Date.now() > deadline) {
      fail("idempotency_in_progress", `an identical ${request.operation} with this idempotency key is still running; retry shortly`, {
        retryAfterMs: 1_000,
      });
    }
    // Failed meanwhile: loop to take it over; still pending: wait and look again.
    if (row?.state === "pending") {
      await waitForSignal(sql, signal, Math.min(pauseMs, Math.max(0, deadline - Date.now())));
      pauseMs = Math.min(pauseMs * 2, 1_000);
    }
  }
}
