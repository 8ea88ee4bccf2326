import type { Queryable } from "@openwork/remote-session-core";
import { hintsOf } from "../wake/hints.js";
import { syncSessionState } from "./sync-session-state.js";

/**
 * Stops a session's work: queued tasks are cancelled at once (their prompts cleared); the running
 * one is asked to stop through `cancelRequested` on its next heartbeat. Returns whether anything
 * was there to stop. Runs in a transaction.
 */
export async function cancelSessionTasks(tx: Queryable, sessionId: string): Promise<boolean> {
  const cancelled = await tx`
    update desktop_task set state = 'cancelled', prompt = null, finished_at = now(), updated_at = now(),
      failure_code = 'stopped', failure_message = 'stopped before a desktop took it'
    where session_id = ${sessionId} and state = 'queued'
    returning id`;
  const requested = await tx<{ organization_id: string }[]>`
    update desktop_task set cancel_requested = true, updated_at = now()
    where session_id = ${sessionId} and state = 'claimed'
    returning organization_id`;
  if (cancelled.length > 0) await syncSessionState(tx, sessionId, { activity: true });
  else if (requested[0]) hintsOf(tx).session(requested[0].organization_id, sessionId);
  return cancelled.length + requested.length > 0;
}
