import type { SessionState } from "../session-state.js";
import { type Budget, type BudgetColumns, type BudgetPause, budgetOf } from "./session-budget.js";
import { type Spend, type SpendColumns, spendOf } from "./session-spend.js";

/** A session as the ledger records it. */
export interface LedgerSession {
  id: string;
  organizationId: string;
  userId: string;
  target: string;
  title: string;
  state: SessionState;
  /** The target's own id of the session, once known. */
  targetSessionId: string | null;
  /** What the target needs to find the session again (ids only). */
  targetRef: Record<string, unknown>;
  lastError: { error: string; message: string } | null;
  /**
   * Set while the create that reserved the row has not handed it to its target yet (nothing
   * exists on the target's side): the core answers such a row itself. Null once taken.
   */
  reservedAt: Date | null;
  /** The session whose engine created this one (through its session credential); null for one a person started. */
  spawnedBy: string | null;
  /** The first session of the tree this one belongs to; null for one a person started (it is its own root). */
  rootId: string | null;
  /** How many spawns lie between this session and its root: 0 for one a person started. */
  depth: number;
  /** When a stop was asked for, until a new prompt: such a session starts no sessions, even while its turn winds down. */
  stopRequestedAt: Date | null;
  /** What it spent so far, as its engine reported it. */
  spend: Spend;
  /** Its own budget (its tree below counts against it too); null when it sets none. */
  budget: Budget | null;
  /** It, or a session above it, holds a budget: its spend is checked. */
  budgeted: boolean;
  /** The budget it reached, asked of the human until raised or stopped; null when not paused. */
  budgetPause: BudgetPause | null;
  createdAt: Date;
  updatedAt: Date;
  lastActivityAt: Date;
}

export interface SessionRow extends SpendColumns, BudgetColumns {
  id: string;
  organization_id: string;
  user_id: string;
  target: string;
  title: string;
  state: SessionState;
  target_session_id: string | null;
  target_ref: Record<string, unknown>;
  last_error: { error: string; message: string } | null;
  reserved_at: Date | null;
  spawned_by: string | null;
  root_id: string | null;
  spawn_depth: number;
  stop_requested_at: Date | null;
  created_at: Date;
  updated_at: Date;
  last_activity_at: Date;
}

export function toLedgerSession(row: SessionRow): LedgerSession {
  return {
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    target: row.target,
    title: row.title,
    state: row.state,
    targetSessionId: row.target_session_id,
    targetRef: row.target_ref,
    lastError: row.last_error,
    reservedAt: row.reserved_at,
    spawnedBy: row.spawned_by,
    rootId: row.root_id,
    depth: row.spawn_depth,
    stopRequestedAt: row.stop_requested_at,
    spend: spendOf(row),
    budget: budgetOf(row),
    budgeted: row.budgeted,
    budgetPause: row.budget_pause,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
  };
}
