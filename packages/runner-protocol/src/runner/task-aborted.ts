/** Why a running task's AbortSignal fired. */
export type TaskAbortReason = "cancel_requested" | "lease_lost" | "runner_stopped";

/** The `reason` of an aborted task signal. Read it with {@link taskAbortReason}. */
export class TaskAbortedError extends Error {
  override readonly name = "TaskAbortedError";
  constructor(readonly reason: TaskAbortReason) {
    super(`task aborted: ${reason}`);
  }
}

/** Why `signal` was aborted by the runner, or undefined if it was not. */
export function taskAbortReason(signal: AbortSignal): TaskAbortReason | undefined {
  return signal.aborted && signal.reason instanceof TaskAbortedError ? signal.reason.reason : undefined;
}
