import type { SessionState } from "@openwork/remote-session-core";

/** States of a remote-session task. */
export const TASK_STATES = ["queued", "claimed", "done", "failed", "cancelled", "interrupted", "expired"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/**
 * The task state machine. Claims re-enter `claimed` (a runner replaying its own claim); every
 * other state but `queued` and `claimed` is final. SQL updates name their `from` states from here.
 */
export const TASK_TRANSITIONS = {
  queued: ["claimed", "cancelled", "expired", "failed"],
  claimed: ["claimed", "done", "failed", "cancelled", "interrupted"],
  done: [],
  failed: [],
  cancelled: [],
  interrupted: [],
  expired: [],
} as const satisfies Record<TaskState, readonly TaskState[]>;

/** The task states from which `to` may be reached. */
export function taskStatesLeadingTo(to: TaskState): TaskState[] {
  return TASK_STATES.filter((from) => (TASK_TRANSITIONS[from] as readonly TaskState[]).includes(to));
}

/** Where a session stands once its latest task is in `state`: the one place this is decided. */
export function toSessionState(state: TaskState): SessionState {
  switch (state) {
    case "queued":
      return "queued";
    case "claimed":
      return "running";
    case "done":
      return "idle";
    case "failed":
      return "failed";
    case "cancelled":
      return "stopped";
    case "interrupted":
      return "interrupted";
    case "expired":
      return "expired";
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}
