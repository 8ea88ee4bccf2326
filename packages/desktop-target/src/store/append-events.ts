import { isDeepStrictEqual } from "node:util";
import type { Queryable, SessionPatch } from "@openwork/remote-session-core";
import type { PostEventsRequest, PostEventsResponse, TaskEvent } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { assertAttemptHeld, lockOwnTask } from "./lock-own-task.js";
import { type LiveState, syncSessionState } from "./sync-session-state.js";
import type { RunnerIdentity, TaskRow } from "./task-row.js";

/**
 * Appends a batch of events to the runner's attempt. Events already held must be replayed
 * unchanged (accepted, not stored twice); a changed replay is `event_conflict`, a gap is
 * `sequence_gap`. The batch is checked whole before anything is written. Runs in a transaction.
 */
export async function appendEvents(
  tx: Queryable,
  runner: RunnerIdentity,
  taskId: string,
  body: PostEventsRequest,
): Promise<PostEventsResponse> {
  const task = await lockOwnTask(tx, runner, taskId);
  assertAttemptHeld(task, body.attempt);
  const { fresh, nextSequence } = await storeEvents(tx, task, body.attempt, body.events);
  if (fresh.length > 0) {
    const { patch, live } = await sessionEffects(tx, taskId, fresh);
    await syncSessionState(tx, task.session_id, patch, live);
  }
  return { taskId, attempt: body.attempt, nextSequence };
}

/**
 * Stores the events of a locked, held attempt that it does not hold yet, after checking the
 * whole batch: replays must be unchanged, and the first new one must follow the last held.
 */
export async function storeEvents(
  tx: Queryable,
  task: Pick<TaskRow, "id">,
  attempt: number,
  events: TaskEvent[],
): Promise<{ fresh: TaskEvent[]; nextSequence: number }> {
  const first = events[0]!.sequence;
  const held = await tx<{ sequence: number; event: TaskEvent }[]>`
    select sequence, event from desktop_task_event
    where task_id = ${task.id} and attempt = ${attempt} and sequence >= ${first} order by sequence`;
  const [{ next } = { next: 1 }] = await tx<{ next: number }[]>`
    select coalesce(max(sequence), 0) + 1 as next from desktop_task_event where task_id = ${task.id} and attempt = ${attempt}`;
  const heldBySequence = new Map(held.map((row) => [row.sequence, row.event]));
  const fresh = events.filter((event) => {
    if (event.sequence >= next) return true;
    if (!isDeepStrictEqual(heldBySequence.get(event.sequence), event)) {
      throw new ChannelRefusal("event_conflict", `event ${event.sequence} differs from the one already received`);
    }
    return false;
  });
  if (fresh.length > 0 && fresh[0]!.sequence !== next) {
    throw new ChannelRefusal("sequence_gap", `expected sequence ${next}, got ${fresh[0]!.sequence}`, { nextSequence: next });
  }
  if (fresh.length > 0) {
    await tx`
      insert into desktop_task_event ${tx(
        fresh.map((event) => ({ task_id: task.id, attempt, sequence: event.sequence, type: event.type, event: tx.json(event as never) })),
      )}`;
  }
  return { fresh, nextSequence: next + fresh.length };
}

/** What new events change on the session: its local id, its live state, its last activity. */
export async function sessionEffects(tx: Queryable, taskId: string, events: TaskEvent[]): Promise<{ patch: Omit<SessionPatch, "state">; live?: LiveState }> {
  const patch: Omit<SessionPatch, "state"> = { activity: true };
  let live: LiveState | undefined;
  for (const event of events) {
    if (event.type === "session.bound") {
      patch.targetSessionId = event.payload.localSessionId;
      await tx`update desktop_task set local_session_id = ${event.payload.localSessionId} where id = ${taskId}`;
    }
    if (event.type === "status" && event.payload.status !== "idle") live = event.payload.status;
    // A request waits on the human until resolved; the turn then runs on.
    if (event.type === "input.requested") live = "waiting_input";
    if (event.type === "input.resolved") live = "running";
  }
  return live ? { patch, live } : { patch };
}
