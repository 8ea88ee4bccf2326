import type { Queryable, SessionState } from "@openwork/remote-session-core/internal";
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import { fromStates } from "../task-state.js";
import type { DerivationTask, LockedSession } from "./sync-session-state.js";
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

/** A task locked with its session (when the session is not gone), for a completion. */
export interface OwnTaskAndSession extends OwnTask {
  session: LockedSession | null;
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
  const { task, held } = await lockOwn(tx, runner, taskId, batch, false);
  return { task, held };
}

/**
 * `lockOwnTask`, and then, in the same statement, the task's session with its turns
 * (`desktop_lock_session`, after the task's lock: the order every writer of a turn takes them).
 * A completion locks both at once, so its settle and the session's move leave together.
 */
export function lockOwnTaskAndSession(tx: Queryable, runner: TaskOwner, taskId: string, batch?: EventBatch): Promise<OwnTaskAndSession> {
  return lockOwn(tx, runner, taskId, batch, true);
}

/** The locked row with the columns the lateral reads add, as postgres.js returns it. */
type LockedRow = TaskRow & {
  held_next?: number;
  held_events?: [number, TaskEvent][];
  session_state?: SessionState | null;
  session_turns?: DerivationTask[] | null;
};

async function lockOwn(tx: Queryable, runner: TaskOwner, taskId: string, batch: EventBatch | undefined, withSession: boolean): Promise<OwnTaskAndSession> {
  const [row] = await tx<LockedRow[]>`
    select t.*
      ${batch ? tx`, h.next as held_next, h.held as held_events` : tx``}
      ${withSession ? tx`, s.state as session_state, s.turns as session_turns` : tx``}
    from desktop_lock_own_task(${runner.organizationId}, ${runner.memberId}, ${runner.runnerId}, ${taskId}) t
    ${batch ? tx`cross join lateral desktop_held_events(t.organization_id, t.id, ${batch.attempt}, ${batch.events[0]!.sequence}) h` : tx``}
    ${withSession ? tx`left join lateral desktop_lock_session(t.organization_id, t.session_id) s on true` : tx``}`;
  if (!row) throw new ChannelRefusal("not_found", "no such task");
  const { held_next: next, held_events: events, session_state: state, session_turns: turns, ...task } = row;
  return {
    task,
    held: next === undefined ? null : { next, held: events! },
    session: state ? { id: task.session_id, organizationId: task.organization_id, state, tasks: turns! } : null,
  };
}

/** Refuses work (`move`: its events, its completion) on an attempt that is no longer the task's running attempt. */
export function assertAttemptHeld(task: TaskRow, attempt: number, move: "renew" | "complete"): void {
  if (!fromStates(move).includes(task.state) || task.attempt !== attempt) {
    throw new ChannelRefusal("lease_lost", `attempt ${attempt} no longer holds the task (${task.state})`);
  }
}
