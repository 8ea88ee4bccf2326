import type { Queryable } from "../queryable.js";

/** How long the ledger keeps what it no longer needs. */
export interface LedgerRetention {
  /**
   * A session with no activity for this long, and no turn in progress, is deleted (with its
   * target's rows that reference it). Default 30 days. A session still `queued` that long is an
   * orphan (a create whose process died between the reservation and its target; no deadline is
   * that far) and goes too.
   */
  sessionMs?: number;
  /** Idempotency keys are honoured this long. Default 24 h. */
  idempotencyMs?: number;
  /** Rows deleted per statement, so a prune never holds many locks or a long transaction. Default 500. */
  batch?: number;
}

export const DEFAULT_LEDGER_RETENTION = { sessionMs: 30 * 24 * 60 * 60_000, idempotencyMs: 24 * 60 * 60_000, batch: 500 } as const;

/**
 * One bounded pass of retention: at most `batch` rows of each kind, the oldest first. Rows are
 * picked with `skip locked`, so replicas pruning at once never wait on each other or delete a
 * row twice. Call it again while it reports a full batch.
 */
export async function pruneLedger(sql: Queryable, retention: LedgerRetention = {}): Promise<{ sessions: number; idempotency: number; rateWindows: number }> {
  const { sessionMs, idempotencyMs, batch } = { ...DEFAULT_LEDGER_RETENTION, ...retention };
  // Retention spans every organization by design: on a sharded database these are multi-shard
  // statements, keyed by each row's full primary key.
  const sessions = await sql`
    /* across organizations: retention */
    delete from remote_session where (organization_id, id) in (
      select organization_id, id from remote_session
      where last_activity_at < now() - make_interval(secs => ${sessionMs / 1000})
        and state not in ('waking', 'running', 'waiting_input')
      order by last_activity_at
      limit ${batch}
      for update skip locked)
    returning id`;
  const idempotency = await sql`
    /* across organizations: retention */
    delete from remote_session_idempotency where (organization_id, user_id, operation, key_digest) in (
      select organization_id, user_id, operation, key_digest from remote_session_idempotency
      where created_at < now() - make_interval(secs => ${idempotencyMs / 1000}) and state <> 'pending'
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
  return { sessions: sessions.length, idempotency: idempotency.length, rateWindows: rateWindows.length };
}
