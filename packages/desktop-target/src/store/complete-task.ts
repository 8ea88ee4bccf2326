import { isDeepStrictEqual } from "node:util";
import type { Queryable } from "@openwork/remote-session-core";
import type { CompleteRequest, CompleteResponse } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { freshEvents, heldEvents, insertEvents, sessionEffects } from "./append-events.js";
import { assertAttemptHeld, lockOwnTask } from "./lock-own-task.js";
import { syncSessionState } from "./sync-session-state.js";
import type { RunnerIdentity } from "./task-row.js";

/**
 * Settles the runner's attempt, with its last events when it carries them (protocol 3: one
 * transaction for both). A completion is immutable: the same body again is accepted (even after
 * the lease), a different one is `completion_conflict`. The prompt is cleared: the task no longer
 * needs it. Runs in a transaction.
 */
export async function completeTask(
  tx: Queryable,
  runner: RunnerIdentity,
  taskId: string,
  body: CompleteRequest,
): Promise<CompleteResponse & { replayed: boolean; nextTaskId: string | null }> {
  const { events, next: _, ...completion } = body;
  // The task's lock and the events it holds, in one round trip.
  const [task, held] = await Promise.all([lockOwnTask(tx, runner, taskId), events ? heldEvents(tx, taskId, body.attempt, events) : null]);
  if (task.completion) {
    if (isDeepStrictEqual(task.completion, completion)) return { taskId, state: task.state, replayed: true, nextTaskId: task.next_task_id };
    throw new ChannelRefusal("completion_conflict", "the task was already completed differently");
  }
  assertAttemptHeld(task, body.attempt);
  const stored = events && held ? freshEvents(events, held).fresh : [];
  const effects = stored.length > 0 ? (await sessionEffects(tx, taskId, stored)).patch : {};
  const failure = body.status === "failed" ? body.error : null;
  const localSessionId = body.localSessionId ?? task.local_session_id;
  // The events and the settled task, in one round trip.
  await Promise.all([
    ...(stored.length > 0 ? [insertEvents(tx, taskId, body.attempt, stored)] : []),
    tx`
      update desktop_task set
        state = ${body.status}, completion = ${tx.json(completion as never)}, prompt = null,
        local_session_id = ${localSessionId}, failure_code = ${failure?.code ?? null},
        failure_message = ${failure?.message ?? null}, finished_at = now(), updated_at = now()
      where id = ${taskId}`,
  ]);
  await syncSessionState(tx, task.session_id, {
    ...effects,
    activity: true,
    lastError: failure ? { error: failure.code, message: failure.message } : null,
    ...(localSessionId ? { targetSessionId: localSessionId } : {}),
  });
  return { taskId, state: body.status, replayed: false, nextTaskId: null };
}
