import { newSessionId } from "../ids.js";
import type { Queryable } from "../queryable.js";
import type { SessionState } from "../session-state.js";
import type { OwnerScope } from "../target.js";
import { findSession } from "./find-session.js";
import { type Budget, budgetColumns, setsBudget } from "./session-budget.js";
import { type SessionRow, toLedgerSession, type LedgerSession } from "./ledger-session.js";

export interface NewSession {
  id?: string;
  target: string;
  title: string;
  state: SessionState;
  targetSessionId?: string | null;
  targetRef?: Record<string, unknown>;
  /** A create's reservation: the target has not taken the row yet (`reservedAt` is set). */
  reserved?: boolean;
}

export async function insertSession(sql: Queryable, scope: OwnerScope, session: NewSession): Promise<LedgerSession> {
  const [row] = await sql<SessionRow[]>`
    insert into remote_session (id, organization_id, user_id, target, title, state, target_session_id, target_ref, reserved_at)
    values (
      ${session.id ?? newSessionId()}, ${scope.organizationId}, ${scope.userId}, ${session.target},
      ${session.title}, ${session.state}, ${session.targetSessionId ?? null},
      ${sql.json((session.targetRef ?? {}) as never)}, ${session.reserved ? sql`now()` : null}
    )
    returning *`;
  return toLedgerSession(row!);
}

/** What a create reserves: the id its idempotency key fixed, the target, the title, the first state and its budget. */
export type ReservedRow = Omit<NewSession, "reserved" | "targetSessionId" | "targetRef"> & { id: string; budget?: Budget | undefined };

/** Where a spawned session sits in its tree (see `reserveSpawnedSession`, which checks the guards). */
export interface SpawnPlacement {
  spawnedBy: string;
  rootId: string;
  depth: number;
  /** A session above it holds a budget: its spend is checked against theirs. */
  underBudget?: boolean;
}

/**
 * Reserves the row of a create under the id its idempotency key fixed: inserted when new, else
 * the row an earlier attempt of the same key left (`fresh: false`), whatever became of it. Null
 * when the id is another member's (never the case for an id the key reserved).
 */
export async function reserveSession(
  sql: Queryable,
  scope: OwnerScope,
  session: ReservedRow,
  spawn?: SpawnPlacement,
): Promise<{ session: LedgerSession; fresh: boolean } | null> {
  const budget = budgetColumns(session.budget);
  const budgeted = setsBudget(session.budget) || spawn?.underBudget === true;
  const [row] = await sql<SessionRow[]>`
    insert into remote_session (id, organization_id, user_id, target, title, state, reserved_at, spawned_by, root_id, spawn_depth,
      budget_tokens, budget_cost_micros, budget_running_ms, budgeted)
    values (${session.id}, ${scope.organizationId}, ${scope.userId}, ${session.target}, ${session.title}, ${session.state}, now(),
      ${spawn?.spawnedBy ?? null}, ${spawn?.rootId ?? null}, ${spawn?.depth ?? 0},
      ${budget.tokens}, ${budget.costMicros}, ${budget.runningMs}, ${budgeted})
    on conflict do nothing
    returning *`;
  if (row) return { session: toLedgerSession(row), fresh: true };
  const earlier = await findSession(sql, scope, session.id);
  return earlier ? { session: earlier, fresh: false } : null;
}
