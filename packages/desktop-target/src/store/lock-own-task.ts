import type { Queryable } from "@openwork/remote-session-core";
import type { TaskEvent } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { fromStates } from "../task-state.js";
import type { TaskOwner, TaskRow } from "./task-row.js";

/** What an attempt holds of a batch: the sequence it expects next and the held events the batch replays. */
export interface HeldEvents {
  next: number;
  held: [number, TaskEvent][];
}

/** Events posted for an attempt (consecutive sequences, at least one). */
export type EventBatch = { attempt: number; events: TaskEvent[] };

/** A task locked by the runner that claimed it, with what its attempt holds of a batch (when one was given). */
export interface OwnTask {
  task: TaskRow;
  held: HeldEvents | null;
}

/**
 * Locks a task the runner claimed, for the rest of the transaction, and reads what the attempt
 * holds of `batch` from its first sequence on, in one statement (`desktop_lock_own_task`, then
 * `desktop_held_events` in a snapshot taken after the lock, migration 0016: a batch the lock's
 * last holder stored is seen). Any other task — another member's, another runner's, one never
 * claimed — is `not_found`: nothing about it leaks.
 */
export async function lockOwnTask(tx: Queryable, runner: TaskOwner, taskId: string, batch: EventBatch): Promise<OwnTask & { held: HeldEvents }>;
export async function lockOwnTask(tx: Queryable, runner: TaskOwner, taskId: string, batch?: EventBatch): Promise<OwnTask>;
export async function lockOwnTask(tx: Queryable, runner: TaskOwner, taskId: string, batch?: EventBatch): Promise<OwnTask> {
  const [row] = batch
    ? await tx<(TaskRow & { held_next: number; held_events: [number, TaskEvent][] })[]>`
        select t.*, h.next as held_next, h.held as held_events
        from desktop_lock_own_task(${runner.organizationId}, ${runner.memberId}, ${runner.runnerId}, ${taskId}) t
        cross join lateral desktop_held_events(t.organization_id, t.id, ${batch.attempt}, ${batch.events[0]!.sequence}) h`
    : await tx<TaskRow[]>`select * from desktop_lock_own_task(${runner.organizationId}, ${runner.memberId}, ${runner.runnerId}, ${taskId})`;
  if (!row) throw new ChannelRefusal("not_found", "no such task");
  if (!("held_next" in row)) return { task: row, held: null };
  const { held_next: next, held_events: held, ...task } = row;
  return { task: task as TaskRow, held: { next, held } };
}

/** Refuses work (`move`: its events, its completion) on an attempt that is no longer the task's running attempt. */
export function assertAttemptHeld(task: TaskRow, attempt: number, move: "renew" | "complete"): void {
  if (!fromStates(move).includes(task.state) || task.attempt !== attempt) {
    throw new ChannelRefusal("lease_lost", `attempt ${attempt} no longer holds the task (${task.state})`);
  }
}
