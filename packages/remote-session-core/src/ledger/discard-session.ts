import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";

/**
 * Removes a session whose create failed before its target took it (still `queued`, never bound
 * to a target session): nothing exists to keep. Returns whether a row was removed.
 */
export async function discardSession(sql: Queryable, scope: OwnerScope, sessionId: string): Promise<boolean> {
  const removed = await sql`
    delete from remote_session
    where id = ${sessionId} and organization_id = ${scope.organizationId} and user_id = ${scope.userId}
      and state = 'queued' and target_session_id is null
    returning id`;
  return removed.length > 0;
}
