import type { Queryable } from "../queryable.js";
import { type LedgerSession, type SessionRow, toLedgerSession } from "./ledger-session.js";

/**
 * The budgeted sessions of `target` whose turn the ledger shows running, active within `withinMs`,
 * unpaused: what a gateway that starts follows again (a turn's follower lived in a process that
 * stopped). Across organizations by design, once a start, through the index of budgeted sessions
 * (the rest is filtered from their rows); at most `limit`, the most recently active first.
 */
export async function runningBudgetedTurns(sql: Queryable, target: string, withinMs: number, limit: number): Promise<LedgerSession[]> {
  const rows = await sql<SessionRow[]>`
    /* across organizations: the budgeted turns a starting gateway follows again */
    select * from remote_session
    where budgeted and state = 'running' and budget_pause is null and target = ${target}
      and last_activity_at > now() - make_interval(secs => ${withinMs / 1000})
    order by last_activity_at desc
    limit ${limit}`;
  return rows.map(toLedgerSession);
}
