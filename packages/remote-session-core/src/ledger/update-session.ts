import type { Queryable } from "../queryable.js";
import { type SessionState, statesLeadingTo } from "../session-state.js";
import { type LedgerSession, type SessionRow, toLedgerSession } from "./ledger-session.js";
import type { ObservedSpend, SpendDelta } from "./session-spend.js";

/** Names one session: its organization leads every key (the tables shard by it). */
export type SessionKey = Pick<LedgerSession, "organizationId" | "id">;

export interface SessionPatch {
  /** Moves the session, only along SESSION_TRANSITIONS. */
  state?: SessionState;
  targetSessionId?: string;
  /** Merged into the stored target_ref. */
  targetRef?: Record<string, unknown>;
  /** Sets (or with null clears) the last error. */
  lastError?: { error: string; message: string } | null;
  /** Marks activity now (a prompt, a reply). */
  activity?: boolean;
  /** A new prompt: clears a stop's request, so the session may start sessions again. */
  prompted?: true;
  /**
   * Compare-and-set: apply only while the session is still in this state (what the writer saw),
   * so a slower writer never moves a session back over a newer writer's state.
   */
  expect?: SessionState;
  /** The target has taken the row its create reserved (clears `reservedAt`). */
  taken?: true;
  /** Compare-and-set on the reservation: apply only while the row is (true) or is no longer (false) reserved. */
  expectReserved?: boolean;
  /** Adds what reported steps spent (each step once: the writer adds only what it had not). */
  spent?: SpendDelta;
  /** Raises the recorded spend to a target's own totals, column by column; never lowers it. */
  spentAtLeast?: ObservedSpend;
}

/**
 * Applies a patch. Returns the updated session, or null when the session does not exist, is no
 * longer in `expect`, or the state change is not an allowed transition: the database checks the
 * same table as the code. Callers check the result ({@link SessionLedger.update} names why).
 */
export async function updateSession(sql: Queryable, session: SessionKey, patch: SessionPatch): Promise<LedgerSession | null> {
  const [row] = await sql<SessionRow[]>`${updateStatement(sql, session, patch)} returning *`;
  return row ? toLedgerSession(row) : null;
}

/**
 * Applies a patch that must take, for a writer that holds the row's lock and checked the move
 * itself: a refusal (`refusal` is its message) fails the statement inside PostgreSQL and aborts
 * the transaction, so a COMMIT sent behind it in the same round trip rolls back. The statement
 * is handed to the connection when this is called, so statements started after it run after it.
 */
export function requireSessionUpdate(sql: Queryable, session: SessionKey, patch: SessionPatch, refusal: string): Promise<void> {
  return sql`
    with updated as (${updateStatement(sql, session, patch)} returning 1)
    select remote_session_required(count(*) = 1, ${refusal}) from updated`
    .execute()
    .then(() => undefined);
}

/** The patch as an UPDATE without its RETURNING clause. */
function updateStatement(sql: Queryable, session: SessionKey, patch: SessionPatch) {
  const from = patch.state ? statesLeadingTo(patch.state) : null;
  return sql`
    update remote_session set
      state = coalesce(${patch.state ?? null}, state),
      target_session_id = coalesce(${patch.targetSessionId ?? null}, target_session_id),
      target_ref = target_ref || ${sql.json((patch.targetRef ?? {}) as never)},
      last_error = case when ${patch.lastError !== undefined} then ${patch.lastError ? sql.json(patch.lastError) : null}::jsonb else last_error end,
      last_activity_at = case when ${patch.activity === true} then now() else last_activity_at end,
      stop_requested_at = case when ${patch.prompted === true} then null else stop_requested_at end,
      reserved_at = case when ${patch.taken === true} then null else reserved_at end,
      ${spendColumns(sql, patch)},
      updated_at = case when ${spendOnly(patch)} then updated_at else now() end
    where organization_id = ${session.organizationId} and id = ${session.id}
      and (${from === null} or state = any(${from ?? []}::text[]))
      and (${patch.expect ?? null}::text is null or state = ${patch.expect ?? null})
      and (${patch.expectReserved ?? null}::boolean is null or (reserved_at is not null) = ${patch.expectReserved ?? null})`;
}

/** The spend columns a patch sets: added to (`spent`), or raised to a target's totals (`spentAtLeast`). */
function spendColumns(sql: Queryable, patch: SessionPatch) {
  const { spent, spentAtLeast: total } = patch;
  const micros = spent?.costMicros ?? total?.costMicros ?? null;
  const reported = spent ? spent.tokensIn !== undefined || spent.tokensOut !== undefined : (total?.reported ?? false);
  if (total)
    return sql`
      spent_tokens_in = greatest(spent_tokens_in, ${total.tokensIn}),
      spent_tokens_out = greatest(spent_tokens_out, ${total.tokensOut}),
      spent_cost_micros = case when ${micros}::bigint is null then spent_cost_micros else greatest(coalesce(spent_cost_micros, 0), ${micros}::bigint) end,
      spent_running_ms = greatest(spent_running_ms, ${total.runningMs}),
      usage_reported = usage_reported or ${reported}`;
  return sql`
      spent_tokens_in = spent_tokens_in + ${spent?.tokensIn ?? 0},
      spent_tokens_out = spent_tokens_out + ${spent?.tokensOut ?? 0},
      spent_cost_micros = case when ${micros}::bigint is null then spent_cost_micros else coalesce(spent_cost_micros, 0) + ${micros}::bigint end,
      spent_running_ms = spent_running_ms + ${spent?.runningMs ?? 0},
      usage_reported = usage_reported or ${reported}`;
}

/** Whether a patch only records spend: `updated_at` (a list's `stateAsOf`) then stays as it was. */
function spendOnly(patch: SessionPatch): boolean {
  return Object.entries(patch).every(([key, value]) => value === undefined || key === "spent" || key === "spentAtLeast");
}
