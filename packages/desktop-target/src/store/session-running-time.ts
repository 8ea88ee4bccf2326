import type { ObservedSpend } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { RowKey } from "./task-row.js";
import { leaving } from "./task-state-sql.js";

/**
 * The wall time a session's turns (creates and follow-ups) ran on their desktops, from each
 * attempt's claim to its end — to now for the one still running — as the spend a read records
 * (the core never lowers it). Tokens and cost are the runner's `usage` events', recorded as they
 * arrive: here they are zero, which never lowers what was recorded either.
 */
export async function sessionRunningTime(sql: Queryable, session: RowKey): Promise<ObservedSpend> {
  const [row] = await sql<{ ms: string | null }[]>`
    select sum(extract(epoch from (coalesce(finished_at, clock_timestamp()) - claimed_at)) * 1000)::bigint::text as ms
    from desktop_task
    where organization_id = ${session.organizationId} and session_id = ${session.id}
      and kind in ('remote_session.create', 'remote_session.send') and claimed_at is not null
      -- Ended, or the attempt running now (a turn requeued after a lost lease waits: not running).
      and (finished_at is not null or ${leaving(sql, "renew")})`;
  return { tokensIn: 0, tokensOut: 0, runningMs: Math.max(0, Number(row?.ms ?? 0)), reported: false };
}
