import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";

/**
 * Removes a session whose create failed before its target took it (still `queued` and reserved):
 * nothing exists to keep. A row the target took stays, so a retry of the same idempotency key
 * finds what the target made. Returns whether it went.
 */
export async function discardSession(sql: Queryable, scope: OwnerScope, sessionId: string): Promise<boolean> {
  const removed = await sql`
    delete from remote_session
    where id = ${sessionId} and organization_id = ${scope.organizationId} and user_id = ${scope.userId}
      and state = 'queued' and reserved_at is not null
    returning id`;
  return removed.length > 0;
}
