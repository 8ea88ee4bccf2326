import { canonicalDigest } from "../digest.js";
import { fail } from "../errors/session-error.js";
import type { Queryable } from "../queryable.js";
import type { MemberScope } from "../target.js";

export interface IdempotencyOptions {
  /** How long a duplicate waits for the first call to finish. Default 60 s. */
  waitMs?: number;
  /** A pending claim older than this is presumed dead (its process crashed) and taken over. Default 120 s. */
  staleMs?: number;
  /** Pause between looks while waiting. Default 50 ms. */
  pollMs?: number;
}

interface IdempotencyRow {
  args_digest: string;
  state: "pending" | "done";
  result: unknown;
}

/**
 * Runs `run` once per (member, operation, key). The first caller claims the key by inserting a
 * row: the primary key settles concurrent duplicates, not timing. Later callers with the same
 * arguments get the stored result (`replayed: true`), with other arguments `idempotency_conflict`.
 * A duplicate arriving while the first is still running waits for its result. If `run` throws,
 * the claim is released so a retry can run again.
 */
export async function runIdempotent<T>(
  sql: Queryable,
  scope: MemberScope,
  request: { operation: "create" | "send"; key: string; args: unknown },
  run: () => Promise<T>,
  options: IdempotencyOptions = {},
): Promise<{ result: T; replayed: boolean }> {
  const keyDigest = canonicalDigest(["key", request.key]);
  const argsDigest = canonicalDigest(request.args);
  const where = sql`
    organization_id = ${scope.organizationId} and member_id = ${scope.memberId}
    and operation = ${request.operation} and key_digest = ${keyDigest}`;
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  const staleSeconds = (options.staleMs ?? 120_000) / 1000;

  for (;;) {
    const claimed = await sql`
      insert into remote_session_idempotency (organization_id, member_id, operation, key_digest, args_digest, state)
      values (${scope.organizationId}, ${scope.memberId}, ${request.operation}, ${keyDigest}, ${argsDigest}, 'pending')
      on conflict do nothing
      returning 1`;
    const takenOver =
      claimed.length === 0
        ? await sql`
            update remote_session_idempotency set claimed_at = now()
            where ${where} and state = 'pending' and args_digest = ${argsDigest}
              and claimed_at < now() - make_interval(secs => ${staleSeconds})
            returning 1`
        : [];
    if (claimed.length > 0 || takenOver.length > 0) {
      let result: T;
      try {
        result = await run();
      } catch (error) {
        await sql`delete from remote_session_idempotency where ${where} and state = 'pending'`;
        throw error;
      }
      await sql`update remote_session_idempotency set state = 'done', result = ${sql.json(result as never)} where ${where}`;
      return { result, replayed: false };
    }

    const [row] = await sql<IdempotencyRow[]>`select args_digest, state, result from remote_session_idempotency where ${where}`;
    if (row && row.args_digest !== argsDigest) {
      fail("idempotency_conflict", `idempotency key was already used for a different ${request.operation}`);
    }
    if (row?.state === "done") return { result: row.result as T, replayed: true };
    if (Date.now() > deadline) {
      fail("rate_limited", `an identical ${request.operation} with this idempotency key is still running; retry shortly`, {
        retryAfterMs: 1_000,
      });
    }
    // Absent: the first call failed and released its claim; loop to claim it ourselves.
    if (row) await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 50));
  }
}
