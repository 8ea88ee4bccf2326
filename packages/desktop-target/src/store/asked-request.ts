import type { PendingInput, Queryable } from "@openwork/remote-session-core/internal";
import type { TranscriptTask } from "../transcript/build-transcript.js";
import { pendingInputOf } from "../transcript/pending-input-of.js";
import type { RowKey } from "./task-row.js";
import { stateIn } from "./task-state-sql.js";

/** What the running turn last asked the human, and whether an answer to it already reached the engine. */
export type AskedRequest = { pending: PendingInput; answered: boolean } | null;

/**
 * What the session's running turn last asked the human (its own events say), and whether it was
 * answered: the turn reports the request resolved on its own stream, which may post after the
 * answer's completion, so until then the completed answer is what says the turn asks nothing.
 */
export async function askedRequest(sql: Queryable, session: RowKey, tasks: TranscriptTask[]): Promise<AskedRequest> {
  const pending = pendingInputOf(tasks);
  return pending ? { pending, answered: await answeredRequest(sql, session, pending.id) } : null;
}

/** The request the human may still answer: none once an answer to it reached the engine. */
export const stillOpen = (asked: AskedRequest): PendingInput | undefined => (asked?.answered ? undefined : asked?.pending);

/** Whether an answer to `requestId` reached the session's engine: a respond task for it the runner completed. */
async function answeredRequest(sql: Queryable, session: RowKey, requestId: string): Promise<boolean> {
  const [row] = await sql<{ answered: boolean }[]>`
    select exists (
      select 1 from desktop_task
      where organization_id = ${session.organizationId} and session_id = ${session.id}
        and kind = 'remote_session.respond' and input->>'requestId' = ${requestId} and ${stateIn(sql, ["done"])}
    ) as answered`;
  return row?.answered === true;
}
