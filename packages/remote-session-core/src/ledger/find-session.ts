import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";
import { type LedgerSession, type SessionRow, toLedgerSession } from "./ledger-session.js";

/**
 * A session of this member, or null. Another member's session is null too: the caller cannot
 * tell it from an id that never existed.
 */
export async function findSession(sql: Queryable, scope: OwnerScope, sessionId: string): Promise<LedgerSession | null> {
  const [row] = await sql<SessionRow[]>`
    select * from remote_session
    where id = ${sessionId} and organization_id = ${scope.organizationId} and user_id = ${scope.userId}`;
  return row ? toLedgerSession(row) : null;
}
