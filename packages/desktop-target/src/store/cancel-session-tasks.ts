import type { Queryable } from "@openwork/remote-session-core/internal";
import type { Hints } from "../wake/hints.js";
import { syncSessionState } from "./sync-session-state.js";
import { endedClears, type RowKey } from "./task-row.js";
import { leaving, movedTo } from "./task-state-sql.js";
import type { DialectSet } from "../dialects/dialect-set.js";

/**
 * Asks the session's running turn to stop (`cancelRequested`, on its next post or heartbeat),
 * leaving its queued follow-ups queued: a pause at a budget stops the turn that spends, and keeps
 * the prompts sent before it. Returns whether a turn was running. Runs in a transaction.
 */
export async function requestRunningStop(tx: Queryable, hints: Hints, session: RowKey): Promise<boolean> {
  const requested = await tx`
    update desktop_task set cancel_requested = true, updated_at = now()
    where organization_id = ${session.organizationId} and session_id = ${session.id} and ${leaving(tx, "requestStop")}
    returning id`;
  if (requested.length > 0) hints.session(session.organizationId, session.id);
  return requested.length > 0;
}

/**
 * Stops a session's work: queued tasks are cancelled at once (their prompts cleared); the running
 * one is asked to stop through `cancelRequested` on its next heartbeat. Returns whether anything
 * was there to stop. Runs in a transaction.
 */
export async function cancelSessionTasks(tx: Queryable, hints: Hints, dialects: DialectSet, session: RowKey): Promise<boolean> {
  const cancelled = await tx`
    update desktop_task set state = ${movedTo(tx, "cancel")}, ${endedClears(tx)}, finished_at = now(), updated_at = now(),
      failure_code = 'stopped', failure_message = 'stopped before a desktop took it'
    where organization_id = ${session.organizationId} and session_id = ${session.id} and ${leaving(tx, "cancel")}
    returning id`;
  const requested = await tx`
    update desktop_task set cancel_requested = true, updated_at = now()
    where organization_id = ${session.organizationId} and session_id = ${session.id} and ${leaving(tx, "requestStop")}
    returning id`;
  if (cancelled.length > 0) await syncSessionState(tx, hints, dialects, session, { activity: true });
  else if (requested.length > 0) hints.session(session.organizationId, session.id);
  return cancelled.length + requested.length > 0;
}
