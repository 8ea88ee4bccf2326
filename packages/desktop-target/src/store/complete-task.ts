import { isDeepStrictEqual } from "node:util";
import type { Queryable } from "@openwork/remote-session-core";
import type { CompleteRequest, CompleteResponse } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { freshEvents, grownFold, heldEvents, insertEvents, MAX_TASK_EVENT_BYTES, sessionEffects, storeFold, tooLarge } from "./append-events.js";
import type { ClaimOutcome } from "./claim-task.js";
import { assertAttemptHeld, lockOwnTask } from "./lock-own-task.js";
import { lockSession, writeSessionState } from "./sync-session-state.js";
import { endedClears, sessionKey, type TaskOwner } from "./task-row.js";
import { pipeline } from "./transaction.js";
import type { Hints } from "../wake/hints.js";

/**
 * Settles the runner's attempt, with its last events when it carries them (protocol 3: one
 * transaction for both). A completion is immutable: the same body again is accepted (even after
 * the lease), a different one is `completion_conflict`. The prompt is cleared: the task no longer
 * needs it. `claimAlong` (protocol 3's next claim) is sent with the session's move, the last
 * write, so both take one round trip; it is not called for a replay. Last events that would take
 * the task past `capBytes` are not stored and the turn ends `failed` (`turn_too_large`). Runs in a
 * transaction, in three round trips.
 */
export async function completeTask(
  tx: Queryable,
  hints: Hints,
  owner: TaskOwner,
  taskId: string,
  body: CompleteRequest,
  claimAlong?: () => Promise<ClaimOutcome | null>,
  capBytes = MAX_TASK_EVENT_BYTES,
): Promise<CompleteResponse & { replayed: boolean; nextTaskId: string | null; claimed: ClaimOutcome | null }> {
  const { events, next: _, ...completion } = body;
  // The task's lock and the events it holds.
  const key = { organizationId: owner.organizationId, id: taskId };
  const [task, held] = await pipeline([lockOwnTask(tx, owner, taskId), events ? heldEvents(tx, key, body.attempt, events) : null]);
  if (task.completion) {
    if (isDeepStrictEqual(task.completion, completion)) return { taskId, state: task.state, replayed: true, nextTaskId: task.next_task_id, claimed: null };
    throw new ChannelRefusal("completion_conflict", "the task was already completed differently");
  }
  assertAttemptHeld(task, body.attempt, "complete");
  const fresh = events && held ? freshEvents(events, held).fresh : [];
  const grown = fresh.length > 0 ? await grownFold(tx, task, fresh, capBytes) : null;
  // Last events past what the turn may store are not kept: the turn ends failed, with what it had.
  const oversized = fresh.length > 0 && !grown;
  const stored = oversized ? [] : fresh;
  const state = oversized ? "failed" : body.status;
  const effects = stored.length > 0 ? (await sessionEffects(tx, key, stored)).patch : {};
  const failure = oversized ? tooLarge(capBytes) : body.status === "failed" ? body.error : null;
  const localSessionId = body.localSessionId ?? task.local_session_id;
  // The events, the settled task, then the session's lock with its turns, which sees them: the
  // writes are handed to the connection (`execute`) before the reads are built.
  const [, , , session] = await pipeline([
    stored.length > 0 ? insertEvents(tx, key, body.attempt, stored).execute() : null,
    grown ? storeFold(tx, key, grown).execute() : null,
    tx`
      update desktop_task set
        state = ${state}, completion = ${tx.json(completion as never)}, ${endedClears(tx)},
        local_session_id = ${localSessionId}, failure_code = ${failure?.code ?? null},
        failure_message = ${failure?.message ?? null}, finished_at = now(), updated_at = now()
      where organization_id = ${owner.organizationId} and id = ${taskId}`.execute(),
    lockSession(tx, sessionKey(task)),
  ]);
  const patch = {
    ...effects,
    activity: true,
    lastError: failure ? { error: failure.code, message: failure.message } : null,
    ...(localSessionId ? { targetSessionId: localSessionId } : {}),
  };
  // The session's move, then the next claim, answered in one round trip. The order matters (a
  // follow-up of this session claimed next moves it again, after this move) and holds because
  // the claim's statement is built after the move's was handed to the connection (it awaits the
  // registration first); desktop-target.db.test.ts's protocol-3 follow-up test guards it.
  const [, claimed] = await pipeline([writeSessionState(tx, hints, session, patch), claimAlong ? claimAlong() : null]);
  return { taskId, state, replayed: false, nextTaskId: null, claimed };
}
