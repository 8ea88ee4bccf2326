import type { Queryable } from "../queryable.js";

/** How long the ledger keeps what it no longer needs. */
export interface LedgerRetention {
  /**
   * A session with no activity for this long is deleted (with its target's rows that reference
   * it). Default 30 days. One the ledger still shows in a turn (`running`, `waking`,
   * `waiting_input`) goes too once its row has not changed for as long either: a cloud session's
   * state is only refreshed when it is read, and no turn runs for a month without a word.
   */
  sessionMs?: number;
  /**
   * A session row a create reserved and its target never took (the create's process died before
   * it asked the target) is deleted this long after the reservation: no create runs that long.
   * A retry of its idempotency key makes it again, under the same id. Default 10 min.
   */
  reservationMs?: number;
  /** Idempotency keys are honoured this long; a key still `pending` then was left by a crash. Default 24 h. */
  idempotencyMs?: number;
  /** Rows deleted per statement, so a prune never holds many locks or a long transaction. Default 500. */
  batch?: number;
}

export const DEFAULT_LEDGER_RETENTION = { sessionMs: 30 * 24 * 60 * 60_000, reservationMs: 10 * 60_000, idempotencyMs: 24 * 60 * 60_000, batch: 500 } as const;

/**
 * One bounded pass of retention: at most `batch` rows of each kind, the oldest first. Rows are
 * picked with `skip locked`, so replicas pruning at once never wait on each other or delete a
 * row twice. Call it again while it reports a full batch.
 */
export async function pruneLedger(
  sql: Queryable,
  retention: LedgerRetention = {},
): Promise<{ sessions: number; reservations: number; idempotency: number; rateWindows: number }> {
  const { sessionMs, reservationMs, idempotencyMs, batch } = { ...DEFAULT_LEDGER_RETENTION, ...retention };
  // Retention spans every organization by design: on a sharded database these are multi-shard
  // statements, keyed by each row's full primary key.
  const sessions = await sql`
    /* across organizations: retention */
    delete from remote_session where (organization_id, id) in (
      select organization_id, id from remote_session
      where last_activity_at < now() - make_interval(secs => ${sessionMs / 1000})
        and (state not in ('waking', 'running', 'waiting_input') or updated_at < now() - make_interval(secs => ${sessionMs / 1000}))
      order by last_activity_at
      limit ${batch}
      for update skip locked)
    returning id`;
  const reservations = await sql`
    /* across organizations: retention */
    delete from remote_session where (organization_id, id) in (
      select organization_id, id from remote_session
      where reserved_at < now() - make_interval(secs => ${reservationMs / 1000}) and state = 'queued'
      order by reserved_at
      limit ${batch}
      for update skip locked)
    returning id`;
  const idempotency = await sql`
    /* across organizations: retention */
    delete from remote_session_idempotency where (organization_id, user_id, operation, key_digest) in (
      select organization_id, user_id, operation, key_digest from remote_session_idempotency
      where created_at < now() - make_interval(secs => ${idempotencyMs / 1000})
        and (state <> 'pending' or claimed_at < now() - make_interval(secs => ${idempotencyMs / 1000}))
      limit ${batch}
      for update skip locked)
    returning 1`;
  const rateWindows = await sql`
    /* across organizations: retention */
    delete from remote_session_rate_window where (organization_id, user_id, bucket, window_start) in (
      select organization_id, user_id, bucket, window_start from remote_session_rate_window
      where window_start < now() - interval '1 day'
      limit ${batch}
      for update skip locked)
    returning 1`;
  return { sessions: sessions.length, reservations: reservations.length, idempotency: idempotency.length, rateWindows: rateWindows.length };
}
