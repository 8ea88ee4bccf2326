import type { SessionState } from "../session-state.js";

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
  createdAt: Date;
  updatedAt: Date;
  lastActivityAt: Date;
}

export interface SessionRow {
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
  };
}
