import type { MemberScope, Receipt } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";

/**
 * The session a desktop receipt names, among this member's own tasks only: a `commandId` is a
 * create's task, a `requestId` any other task about a session (a relayed read, send, stop, an
 * answer). Another member's id finds nothing, exactly like an unknown one.
 */
export async function sessionOfReceipt(sql: Queryable, scope: MemberScope, receipt: Receipt): Promise<string | null> {
  const id = receipt.commandId ?? receipt.requestId;
  const creates = receipt.commandId !== undefined;
  const [row] = await sql<{ session_id: string }[]>`
    select session_id from desktop_task
    where organization_id = ${scope.organizationId} and id = ${id} and member_id = ${scope.memberId}
      and (kind = 'remote_session.create') = ${creates}`;
  return row?.session_id ?? null;
}
