import type { Queryable } from "../queryable.js";
import { statesLeadingTo } from "../session-state.js";

type Fragment = ReturnType<Queryable>;

/** The rows of a claim statement whose turns started, as `turnStartMove` reads them (alias `c`). */
export interface StartedTurns {
  /** The claim's CTE (or table expression) with `organization_id` and `session_id` per row. */
  from: Fragment;
  /** Which of its rows are turns of the session (a condition on `c`); the others never move it. */
  isTurn: Fragment;
  /** What the session's `target_ref` takes from a row (a jsonb expression on `c`, merged; `'{}'` for nothing). */
  targetRef: Fragment;
}

/**
 * The ledger's move of the sessions whose turns a claim just started, as a data-modifying CTE
 * `moved as (…)` for the claim's own statement, so a claim and its session's move are one round
 * trip: a started turn means running, and a session waiting for the human stays waiting (the turn
 * asked while it was queued). Like `updateSession` it refuses a move the transition table forbids:
 * such a session gets no row in `moved` (the caller decides whether that fails its statement).
 * Returns `id` and `target_session_id` of each moved session.
 */
export function turnStartMove(sql: Queryable, turns: StartedTurns): Fragment {
  return sql`
    moved as (
      update remote_session s set
        state = case when s.state = 'waiting_input' then s.state else 'running' end,
        target_ref = s.target_ref || ${turns.targetRef},
        last_activity_at = now(), updated_at = now()
      from ${turns.from} c
      where s.organization_id = c.organization_id and s.id = c.session_id and ${turns.isTurn}
        and s.state = any(${statesLeadingTo("running")}::text[])
      returning s.id, s.target_session_id)`;
}

/** Locks the session's row for the rest of the transaction (writers of one session serialize on it); false when it is gone. */
export async function lockSessionRow(sql: Queryable, session: { organizationId: string; id: string }): Promise<boolean> {
  const rows = await sql`select 1 from remote_session where organization_id = ${session.organizationId} and id = ${session.id} for update`;
  return rows.length === 1;
}
