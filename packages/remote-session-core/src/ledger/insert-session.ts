import { newSessionId } from "../ids.js";
import type { Queryable } from "../queryable.js";
import type { SessionState } from "../session-state.js";
import type { OwnerScope } from "../target.js";
import { type SessionRow, toLedgerSession, type LedgerSession } from "./ledger-session.js";

export interface NewSession {
  id?: string;
  target: string;
  title: string;
  state: SessionState;
  targetSessionId?: string | null;
  targetRef?: Record<string, unknown>;
}

export async function insertSession(sql: Queryable, scope: OwnerScope, session: NewSession): Promise<LedgerSession> {
  const [row] = await sql<SessionRow[]>`
    insert into remote_session (id, organization_id, user_id, target, title, state, target_session_id, target_ref)
    values (
      ${session.id ?? newSessionId()}, ${scope.organizationId}, ${scope.userId}, ${session.target},
      ${session.title}, ${session.state}, ${session.targetSessionId ?? null},
      ${sql.json((session.targetRef ?? {}) as never)}
    )
    returning *`;
  return toLedgerSession(row!);
}
