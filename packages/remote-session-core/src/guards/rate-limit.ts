import { fail } from "../errors/session-error.js";
import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";

export interface RateLimit {
  /** Counter name, e.g. "create". */
  bucket: string;
  /** Allowed hits per window. */
  limit: number;
  windowMs: number;
}

/** The default per-owner create limit: 32 a minute. */
export const CREATE_RATE_LIMIT: RateLimit = { bucket: "create", limit: 32, windowMs: 60_000 };

/** The default per-owner send limit: 120 a minute (two a second, sustained). */
export const SEND_RATE_LIMIT: RateLimit = { bucket: "send", limit: 120, windowMs: 60_000 };

/**
 * Counts one hit for the member in the current fixed window (shared by every replica through
 * Postgres) and throws `rate_limited` with `retryAfterMs` once the window is full. A refused
 * hit is not counted.
 */
export async function takeRateLimit(sql: Queryable, scope: OwnerScope, rule: RateLimit = CREATE_RATE_LIMIT): Promise<void> {
  const now = Date.now();
  const windowStart = new Date(now - (now % rule.windowMs));
  // The owner's old windows are dead weight: the first hit of each window sweeps them in the
  // same statement, so every hit costs one statement (a chance-driven sweep made the count vary).
  const [row] = await sql<{ hits: number }[]>`
    with hit as (
      insert into remote_session_rate_window as w (organization_id, user_id, bucket, window_start, hits)
      values (${scope.organizationId}, ${scope.userId}, ${rule.bucket}, ${windowStart}, 1)
      on conflict (organization_id, user_id, bucket, window_start)
        do update set hits = w.hits + 1 where w.hits < ${rule.limit}
      returning hits
    ), swept as (
      delete from remote_session_rate_window
      where organization_id = ${scope.organizationId} and user_id = ${scope.userId} and bucket = ${rule.bucket}
        and window_start < ${new Date(now - 10 * rule.windowMs)}
        and exists (select from hit where hits = 1)
    )
    select hits from hit`;
  if (!row) {
    const retryAfterMs = windowStart.getTime() + rule.windowMs - now;
    fail("rate_limited", `at most ${rule.limit} ${rule.bucket} calls per ${rule.windowMs / 1000} s; retry later`, {
      retryAfterMs,
    });
  }
}
