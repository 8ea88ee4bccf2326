import type { Backoff } from "../client/backoff.js";
import type { RunnerClient } from "../client/runner-client.js";
import { RunnerProtocolError } from "../client/runner-protocol-error.js";
import { type Timers, sleep } from "../timers.js";
import type { Assignment, ClaimedAssignment, WorkAssignment } from "../v1/assignment.js";
import { isBuiltInKind } from "../v1/work-kinds.js";
import type { TaskResult, WorkResult } from "../v1/complete.js";
import { LIMITS } from "../v1/limits.js";
import type { TaskEventInput } from "../v1/task-events.js";
import { type Coalescing, EventOutbox } from "./event-outbox.js";
import { retryUntilSettled } from "./retry-until-settled.js";
import { holdSessionMcp, type SessionMcpHolder, type SessionMcpView } from "./session-mcp-holder.js";
import { TaskAbortedError, type TaskAbortReason, taskAbortReason } from "./task-aborted.js";

/** What a handler gets besides its assignment. */
export interface TaskContext {
  /**
   * Fires when the gateway asks to cancel (`cancel_requested`), the lease is lost
   * (`lease_lost`) or the runner stops (`runner_stopped`); see `taskAbortReason(signal)`.
   */
  signal: AbortSignal;
  /** Queues an event; the runner numbers it and posts it in order. `terminal` is the runner's. */
  emit(event: Exclude<TaskEventInput, { type: "terminal" }>): void;
  /** The gateway's MCP entry for the turn's engine (its session credential), kept fresh by the heartbeats. */
  mcp: SessionMcpView;
}

/** Runs one kind of assignment and says how it ended. Throwing counts as `execution_failed`. */
export type TaskHandler<A extends Assignment = Assignment> = (assignment: A, context: TaskContext) => Promise<TaskResult>;

/**
 * Runs an assignment of a kind the host registered (`automation.run`, protocol 4): its own fields
 * are in `assignment.input`, its result's in `result`. The lease, heartbeats, cancellation,
 * events and completion are the runner's, as for a remote-session task. Throwing counts as
 * `execution_failed`.
 */
export type WorkHandler = (assignment: WorkAssignment, context: TaskContext) => Promise<WorkResult>;

/** Either handler, as the loop holds it once it picked it by the assignment's kind. */
export type AnyHandler = (assignment: ClaimedAssignment, context: TaskContext) => Promise<TaskResult | WorkResult>;

/** Whether an assignment is of a remote-session kind (not one the host registered). */
const isRemoteSession = (assignment: ClaimedAssignment): assignment is Assignment => isBuiltInKind(assignment.kind);

/** How one claimed attempt ended, as the runner saw it. */
export interface TaskOutcome {
  taskId: string;
  /** A remote-session kind, or one the host registered. */
  kind: string;
  attempt: number;
  /** The completion posted, or why none was. */
  status: TaskResult["status"] | "lease_lost" | "runner_stopped";
  /** The task the gateway claimed for the runner with this completion (protocol 3; never a host's kind). */
  next?: Assignment;
  /**
   * The completion asked for a next task of every kind that fits once this one ends, and the
   * gateway had none: looking again at once would find none either (new work sends a wake-up).
   */
  nothingNext?: true;
}

// Heartbeats that may fail in a row (each already retried) before the runner assumes its lease
// is gone and stops work it can no longer report, once the lease it last heard of has run out
// too: a gateway whose database restarts fails every heartbeat for a few seconds, and a runner
// that gave up after two of them (1 s apart under a 10 s lease) lost a task the gateway would
// still have taken. The lease's end is read on the runner's clock: a clock ahead of the gateway's
// gives up after the misses alone (as before), one behind holds on longer, until the gateway,
// reachable again, says the lease is gone.
const MAX_HEARTBEAT_MISSES = 2;

export async function runTask(
  assignment: ClaimedAssignment,
  deps: {
    client: RunnerClient;
    handler: AnyHandler;
    timers: Timers;
    backoff?: Backoff;
    heartbeatIntervalMs?: number;
    /** The runner is stopping. */
    stopSignal: AbortSignal;
    /** The gateway speaks protocol 3: the last events ride on the completion. */
    eventsOnComplete?: boolean;
    /** How a streaming turn's events gather into few posts (see EventOutbox). */
    coalescing?: Coalescing;
    /** Protocol 3: the kinds the runner can take once this task ends, claimed with the completion. */
    nextKinds?: () => string[];
  },
): Promise<TaskOutcome> {
  const { taskId, attempt } = assignment;
  const work = new AbortController();
  const onStop = () => abortWork(work, "runner_stopped");
  deps.stopSignal.addEventListener("abort", onStop, { once: true });
  // The lease ends when the attempt is settled, or earlier if the gateway says it is gone.
  const leaseOver = new AbortController();
  const lost = () => {
    abortWork(work, "lease_lost");
    leaseOver.abort();
  };
  const channel = AbortSignal.any([leaseOver.signal, deps.stopSignal]);
  const cancel = () => abortWork(work, "cancel_requested");
  const outbox = new EventOutbox({
    ...deps,
    taskId,
    attempt,
    traceparent: assignment.traceparent,
    signal: channel,
    ...(deps.coalescing ? { coalescing: deps.coalescing } : {}),
    onCancel: cancel,
  });

  // A turn's engine gets the gateway's MCP entry; an answer and a host's kind have none.
  const mcp = holdSessionMcp(isRemoteSession(assignment) && assignment.kind !== "remote_session.respond" ? assignment.mcp : undefined);
  const heartbeats = heartbeatLoop(assignment, deps, leaseOver.signal, {
    onLost: lost,
    onCancel: cancel,
    mcp,
  });

  let result: TaskResult | WorkResult;
  try {
    result = await deps.handler(assignment, { signal: work.signal, emit: (event) => outbox.emit(event), mcp });
  } catch (error) {
    result = failureOf(error, work.signal);
  }
  const reason = taskAbortReason(work.signal);
  const settled: SettledAttempt = { assignment, deps, outbox, channel, leaseOver, heartbeats, onStop };
  if (reason === "lease_lost" || reason === "runner_stopped") {
    await outbox.flush();
    return endAttempt(settled, reason);
  }
  return completeAttempt(settled, result);
}

/** An attempt whose handler has returned: what its completion and end need. */
interface SettledAttempt {
  assignment: ClaimedAssignment;
  deps: Parameters<typeof runTask>[1];
  outbox: EventOutbox;
  /** Aborts when the lease is over or the runner stops: the completion's signal. */
  channel: AbortSignal;
  leaseOver: AbortController;
  heartbeats: Promise<void>;
  /** The runner-stop listener to remove. */
  onStop: () => void;
}

function abortWork(work: AbortController, reason: TaskAbortReason): void {
  if (!work.signal.aborted) work.abort(new TaskAbortedError(reason));
}

/** Ends the lease, waits for the heartbeats to stop and says how the attempt ended. */
async function endAttempt(settled: SettledAttempt, status: TaskOutcome["status"], next?: Assignment | null): Promise<TaskOutcome> {
  const { assignment, deps } = settled;
  settled.leaseOver.abort();
  await settled.heartbeats;
  deps.stopSignal.removeEventListener("abort", settled.onStop);
  return {
    taskId: assignment.taskId,
    kind: assignment.kind,
    attempt: assignment.attempt,
    status,
    ...(next ? { next } : next === null ? { nothingNext: true as const } : {}),
  };
}

/** Posts the terminal event and the completion (with the next kinds to claim, protocol 3), retried until settled. */
async function completeAttempt(settled: SettledAttempt, result: TaskResult | WorkResult): Promise<TaskOutcome> {
  const { assignment, deps, outbox, channel } = settled;
  const { taskId, attempt } = assignment;
  outbox.emit({
    type: "terminal",
    payload: { status: result.status, ...(result.status === "failed" ? { error: result.error } : {}) },
  });
  const events = deps.eventsOnComplete ? await outbox.detachTail() : await outbox.flush().then(() => []);
  const kinds = deps.stopSignal.aborted ? [] : (deps.nextKinds?.() ?? []);
  const body = { ...result, attempt, ...(events.length > 0 ? { events } : {}), ...(kinds.length > 0 ? { next: { kinds } } : {}) };
  let answer: Awaited<ReturnType<RunnerClient["complete"]>>;
  try {
    answer = await retryUntilSettled(() => deps.client.complete(taskId, body, channel, { traceparent: assignment.traceparent }), { ...deps, signal: channel });
  } catch (error) {
    if (isGone(error)) return endAttempt(settled, "lease_lost");
    if (deps.stopSignal.aborted) return endAttempt(settled, "runner_stopped");
    throw error;
  }
  // `null` only from a gateway that looked for the kinds asked (an older one leaves `next` out).
  return endAttempt(settled, result.status, kinds.length > 0 ? answer.next : undefined);
}

function heartbeatLoop(
  assignment: ClaimedAssignment,
  deps: { client: RunnerClient; timers: Timers; heartbeatIntervalMs?: number },
  over: AbortSignal,
  on: { onLost: () => void; onCancel: () => void; mcp: SessionMcpHolder },
): Promise<void> {
  const interval = deps.heartbeatIntervalMs ?? assignment.heartbeatIntervalMs;
  return (async () => {
    let misses = 0;
    let leaseEnd = Date.parse(assignment.leaseExpiresAt);
    while (!over.aborted) {
      await sleep(deps.timers, interval, over);
      if (over.aborted) return;
      try {
        const answer = await deps.client.heartbeat(assignment.taskId, assignment.attempt, over, {
          traceparent: assignment.traceparent,
          ...(on.mcp.due() ? { refreshMcp: true } : {}),
        });
        misses = 0;
        if (!answer.leaseValid) return on.onLost();
        if (answer.leaseExpiresAt) leaseEnd = Date.parse(answer.leaseExpiresAt);
        if (answer.mcp) on.mcp.replace(answer.mcp);
        if (answer.cancelRequested) on.onCancel();
      } catch (error) {
        if (over.aborted) return;
        if (isGone(error) || (++misses >= MAX_HEARTBEAT_MISSES && deps.timers.now() >= leaseEnd)) return on.onLost();
      }
    }
  })();
}

/** 404 and 409 on a task route: the attempt is not ours any more. */
export function isGone(error: unknown): boolean {
  return RunnerProtocolError.isInstance(error) && (error.status === 404 || error.status === 409);
}

function failureOf(error: unknown, signal: AbortSignal): TaskResult {
  if (taskAbortReason(signal) === "cancel_requested") return { status: "cancelled", reason: "cancel requested" };
  const message = error instanceof Error ? error.message : String(error);
  return { status: "failed", error: { code: "execution_failed", message: message.slice(0, LIMITS.errorMessage) } };
}
