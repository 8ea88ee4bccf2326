import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from "../client/backoff.js";
import type { RunnerClient } from "../client/runner-client.js";
import { RunnerProtocolError } from "../client/runner-protocol-error.js";
import { openWakeStream } from "../client/wake-stream.js";
import { type Timers, sleep, systemTimers } from "../timers.js";
import type { Assignment, CreateAssignment, RespondAssignment, SendAssignment } from "../v1/assignment.js";
import { CLAIM_NEXT_PROTOCOL } from "../v1/capabilities.js";
import type { WorkKind } from "../v1/work-kinds.js";
import type { Coalescing } from "./event-outbox.js";
import { type TaskHandler, type TaskOutcome, isGone, runTask } from "./run-task.js";

/**
 * How a runner speaking protocol 3 posts a streaming turn: the first post at once, then at most
 * one every 100 ms, the window doubling to 1 s while the turn streams (the tail rides on complete).
 */
// The first window is a quarter second: finer than a reader follows streaming text, and a typical
// turn's stream (a second or two) then leaves in about three posts. It doubles to 1 s, the most
// text ever waits.
export const DEFAULT_COALESCING: Coalescing = { windowMs: 250, maxWindowMs: 1_000 };

/** One handler per kind of work the runner takes; a kind without a handler is never claimed. */
export interface RunnerHandlers {
  "remote_session.create"?: TaskHandler<CreateAssignment>;
  "remote_session.send"?: TaskHandler<SendAssignment>;
  "remote_session.respond"?: TaskHandler<RespondAssignment>;
}

/**
 * Work that unblocks a running turn rather than starting one: it never waits for a free slot
 * (the turn it answers holds one), so a runner with every slot busy still takes it.
 */
const CONTROL_KINDS: ReadonlySet<WorkKind> = new Set(["remote_session.respond"]);

/** What the loop reports; ids, codes and counts only, never prompt text. */
export interface RunnerLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface RunRunnerOptions {
  client: RunnerClient;
  handlers: RunnerHandlers;
  /** Tasks run at once. Default 1. */
  concurrency?: number;
  /**
   * The protocol the gateway answered at the token mint. From 3 on, the runner claims with one
   * `claim-next` request instead of a work listing and claims, and its completions carry the last
   * events. Default 1 (the listing, understood by every gateway).
   */
  gatewayProtocolVersion?: number;
  /** Listen on the SSE wake stream. Default true; without it the runner only polls. */
  wakeStream?: boolean;
  /** The backstop poll when no wake-up comes. Default 60 s. */
  pollIntervalMs?: number;
  /** Overrides the heartbeat interval the gateway gives in each assignment. */
  heartbeatIntervalMs?: number;
  /** A dead stream is one silent this long. Default 45 s. */
  wakeSilenceMs?: number;
  /**
   * How a streaming turn's events gather into posts against a protocol-3 gateway. Default
   * (`DEFAULT_COALESCING`): the first content at once, then a window of 250 ms doubling to 1 s.
   */
  coalescing?: Coalescing;
  backoff?: Backoff;
  timers?: Timers;
  logger?: RunnerLogger;
  /** The gateway refused the token (401/403): mint a new one; the client reads it per request. */
  onCredentialRetired?: (error: RunnerProtocolError) => void;
  onTaskEnd?: (outcome: TaskOutcome) => void;
}

/** A running runner loop. */
export interface Runner {
  /** Poll for work now (power resume, network back, the app came to the front). */
  wake(): void;
  /** Stops polling and the stream, aborts running tasks (`runner_stopped`) and waits for them. */
  stop(): Promise<void>;
}

/**
 * The desktop runner loop: drain work until none is left, then wait for a wake-up (SSE hint,
 * `wake()`, or the backstop poll). Each claimed task heartbeats while its handler runs, gets
 * cancellation and lease loss as an AbortSignal, posts its events in order and completes with
 * retry.
 */
export function runRunner(options: RunRunnerOptions): Runner {
  const timers = options.timers ?? systemTimers;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const concurrency = options.concurrency ?? 1;
  const claimsNext = (options.gatewayProtocolVersion ?? 1) >= CLAIM_NEXT_PROTOCOL;
  const pollIntervalMs = options.pollIntervalMs ?? 60_000;
  const log = options.logger;
  const stopping = new AbortController();
  const running = new Map<string, Promise<void>>();
  let kicked = false;
  let kick = new AbortController();
  // Wake-ups so far: one that came while a task held its slot may have found no slot to claim with.
  let wakes = 0;

  const wake = () => {
    wakes++;
    kicked = true;
    kick.abort();
  };

  const report = (error: unknown, during: string) => {
    if (stopping.signal.aborted) return;
    const protocolError = RunnerProtocolError.isInstance(error) ? error : undefined;
    log?.warn(`runner: ${during} failed`, { code: protocolError?.code ?? "unexpected", status: protocolError?.status });
    if (protocolError?.credentialRetired) options.onCredentialRetired?.(protocolError);
  };

  const stream =
    options.wakeStream === false
      ? undefined
      : openWakeStream({
          client: options.client,
          onEvent: (event) => {
            if (event.type === "remote_session_work_available") wake();
          },
          onOpen: wake,
          onError: (error) => report(error, "wake stream"),
          backoff,
          timers,
          ...(options.wakeSilenceMs ? { silenceMs: options.wakeSilenceMs } : {}),
        });

  const start = (assignment: Assignment) => {
    const handler = options.handlers[assignment.kind] as TaskHandler | undefined;
    if (!handler) return;
    const wakesAtStart = wakes;
    log?.info("runner: claimed", { taskId: assignment.taskId, kind: assignment.kind, attempt: assignment.attempt });
    const task = runTask(assignment, {
      client: options.client,
      handler,
      timers,
      backoff,
      stopSignal: stopping.signal,
      eventsOnComplete: claimsNext,
      // The slot this task frees is taken again in the same request: no look in between.
      ...(claimsNext
        ? {
            coalescing: options.coalescing ?? DEFAULT_COALESCING,
            nextKinds: () => handled.filter((kind) => CONTROL_KINDS.has(kind) || running.size - 1 < concurrency),
          }
        : {}),
      ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
    })
      .then((outcome) => {
        const { next: _, ...ended } = outcome;
        log?.info("runner: task ended", { ...ended, next: outcome.next?.taskId ?? null });
        options.onTaskEnd?.(outcome);
        return outcome;
      })
      .catch((error: unknown) => void report(error, "task"))
      .then((outcome) => {
        running.delete(assignment.taskId);
        if (outcome?.next && !stopping.signal.aborted) start(outcome.next);
        // The completion already looked for what this slot can take: a look now would find nothing,
        // unless work was announced while the slot was busy (its look may have come first).
        else if (!outcome?.nothingNext || wakes !== wakesAtStart) wake();
      });
    running.set(assignment.taskId, task);
  };

  const slotFree = () => running.size < concurrency;
  const handled = (Object.keys(options.handlers) as WorkKind[]).filter((kind) => options.handlers[kind]);
  // Control work is listened for only by a runner that can take it; else a busy runner rests.
  const takesControl = [...CONTROL_KINDS].some((kind) => options.handlers[kind]);
  const fits = (kind: WorkKind) => slotFree() || CONTROL_KINDS.has(kind);

  /** Protocol 3: one request per claim, for the kinds that fit now, until the gateway has none. */
  const drainNext = async (): Promise<boolean> => {
    for (;;) {
      const kinds = handled.filter(fits);
      if (kinds.length === 0 || stopping.signal.aborted) return true;
      try {
        const { assignment, more } = await options.client.claimNextReply(kinds, stopping.signal);
        if (!assignment) return true;
        start(assignment);
        // The gateway saw nothing else of these kinds waiting: asking again would find nothing.
        if (more === false) return true;
      } catch (error) {
        report(error, "claim");
        return false;
      }
    }
  };

  /** Claims work until none is left (or only turns are left and every slot is busy); false when the gateway failed us. */
  const drainListed = async (): Promise<boolean> => {
    for (;;) {
      if ((!slotFree() && !takesControl) || stopping.signal.aborted) return true;
      let items: Awaited<ReturnType<RunnerClient["work"]>>["items"];
      try {
        items = (await options.client.work(stopping.signal)).items;
      } catch (error) {
        report(error, "work poll");
        return false;
      }
      let claimed = 0;
      // Several runners of one member see the same list: trying it in a random order keeps them
      // from all racing for the first task.
      for (const item of shuffled(items)) {
        if (stopping.signal.aborted) break;
        if (running.has(item.taskId) || !options.handlers[item.kind] || !fits(item.kind)) continue;
        try {
          start(await options.client.claim(item.taskId, stopping.signal));
          claimed++;
        } catch (error) {
          // Another runner won the race, or the task ended meanwhile.
          if (isGone(error)) continue;
          report(error, "claim");
          return false;
        }
      }
      if (claimed === 0) return true;
    }
  };

  const drain = claimsNext ? drainNext : drainListed;

  const loop = (async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      kicked = false;
      kick = new AbortController();
      failures = (await drain()) ? 0 : failures + 1;
      if (kicked) continue;
      const waitMs = failures === 0 ? pollIntervalMs : backoffDelay(failures - 1, backoff);
      await sleep(timers, waitMs, AbortSignal.any([kick.signal, stopping.signal]));
    }
  })();

  return {
    wake,
    stop: async () => {
      stopping.abort();
      stream?.close();
      await Promise.all([loop, stream?.closed, ...running.values()]);
    },
  };
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
