import type { Queryable } from "@openwork/remote-session-core";
import { ChannelRefusal } from "../channel-refusal.js";
import { fromStates } from "../task-state.js";
import type { TaskOwner, TaskRow } from "./task-row.js";

/**
 * Locks a task the runner claimed, for the rest of the transaction. Any other task — another
 * member's, another runner's, one never claimed — is `not_found`: nothing about it leaks.
 */
export async function lockOwnTask(tx: Queryable, runner: TaskOwner, taskId: string): Promise<TaskRow> {
  const [task] = await tx<TaskRow[]>`
    select * from desktop_task
    where id = ${taskId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
      and claimed_by_runner_id = ${runner.runnerId}
    for update`;
  if (!task) throw new ChannelRefusal("not_found", "no such task");
  return task;
}

/** Refuses work (`move`: its events, its completion) on an attempt that is no longer the task's running attempt. */
export function assertAttemptHeld(task: TaskRow, attempt: number, move: "renew" | "complete"): void {
  if (!fromStates(move).includes(task.state) || task.attempt !== attempt) {
    throw new ChannelRefusal("lease_lost", `attempt ${attempt} no longer holds the task (${task.state})`);
  }
}
