import type { SessionState } from "@openwork/remote-session-core/internal";

/** States of a remote-session task. */
export const TASK_STATES = ["queued", "claimed", "done", "failed", "cancelled", "interrupted", "expired"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/**
 * Every write that moves a task, or writes one in place, by name, with the states it takes the
 * task from (`from`) and to (`to`; none for a write that leaves the state as it is). Each SQL
 * statement guards on its entry's `from` (store/task-state-sql.ts renders it), so this table
 * is the one place that says which task may be written how; `TASK_TRANSITIONS` is derived from it.
 */
export const TASK_MOVES = {
  /** A new task waits for a runner. */
  enqueue: { from: [], to: ["queued"] },
  /** A runner takes a queued task (eligibility, claim, claim-next). */
  claim: { from: ["queued"], to: ["claimed"] },
  /** A runner takes its own claim again (its first answer was lost; OpenWork's recovery journal). */
  reclaim: { from: ["claimed"], to: ["claimed"] },
  /** A heartbeat extends the lease of the running attempt. */
  renew: { from: ["claimed"] },
  /** The runner settles its attempt (protocol `complete`). */
  complete: { from: ["claimed"], to: ["done", "failed", "cancelled"] },
  /** An OpenWork desktop's receipt, accepted after the lease lapsed as OpenWork accepts it. */
  deliver: { from: ["claimed", "interrupted"], to: ["done", "failed"] },
  /** The gateway fails a claimed attempt (model access lost, a turn too large). */
  fail: { from: ["claimed"], to: ["failed"] },
  /** The runner a task waits for alone is revoked. */
  failPinned: { from: ["queued"], to: ["failed"] },
  /** A stop cancels what no runner took yet. */
  cancel: { from: ["queued"], to: ["cancelled"] },
  /** A stop asks the running attempt to stop (`cancelRequested` on its next heartbeat). */
  requestStop: { from: ["claimed"] },
  /** The sweeper ends an attempt whose lease lapsed. */
  interrupt: { from: ["claimed"], to: ["interrupted"] },
  /** The sweeper ends a task no runner claimed by its deadline. */
  expire: { from: ["queued"], to: ["expired"] },
  /** A delivered OpenWork command's progress: its reports, and the presence sweep marking it lost. */
  report: { from: ["done"] },
} as const satisfies Record<string, { from: readonly TaskState[]; to?: readonly TaskState[] }>;
export type TaskMove = keyof typeof TASK_MOVES;

/** One entry of the table, typed for reading. */
interface TaskWrite {
  from: readonly TaskState[];
  to?: readonly TaskState[];
}
const WRITES: Readonly<Record<TaskMove, TaskWrite>> = TASK_MOVES;

/** The states a turn is open in: waiting for a runner or held by one (a session's turns run in order). */
export const OPEN_TASK_STATES: readonly TaskState[] = [...new Set([...WRITES.claim.from, ...(WRITES.claim.to ?? [])])];

/** The states a write named `move` applies to. */
export function fromStates(move: TaskMove): readonly TaskState[] {
  return WRITES[move].from;
}

/** The state a move ends in, for a move with one. */
export function toState(move: TaskMove): TaskState {
  const to = WRITES[move].to ?? [];
  if (to.length !== 1) throw new Error(`task move ${move} does not end in one state`);
  return to[0]!;
}

/**
 * The task state machine, derived from the moves: claims re-enter `claimed` (a runner replaying
 * its own claim); an OpenWork receipt may still settle an `interrupted` task; every other state
 * but `queued` and `claimed` is final.
 */
export const TASK_TRANSITIONS = Object.fromEntries(TASK_STATES.map((from) => [from, TASK_STATES.filter((to) => canMoveTask(from, to))])) as unknown as Readonly<
  Record<TaskState, readonly TaskState[]>
>;

function canMoveTask(from: TaskState, to: TaskState): boolean {
  return Object.values(WRITES).some((write) => write.from.includes(from) && (write.to ?? []).includes(to));
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
