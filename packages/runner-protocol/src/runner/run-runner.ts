import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from "../client/backoff.js";
import type { RunnerClient } from "../client/runner-client.js";
import { RunnerProtocolError } from "../client/runner-protocol-error.js";
import { openWakeStream } from "../client/wake-stream.js";
import { type Timers, sleep, systemTimers } from "../timers.js";
import type { ClaimedAssignment, CreateAssignment, RespondAssignment, SendAssignment } from "../v1/assignment.js";
import { CLAIM_NEXT_PROTOCOL, HOST_KINDS_PROTOCOL, STREAM_READY_PROTOCOL } from "../v1/capabilities.js";
import type { WakeEvent } from "../v1/wake-event.js";
import { isBuiltInKind, MAX_CLAIM_KINDS, WORK_KINDS, WorkKindNameSchema } from "../v1/work-kinds.js";
import type { Coalescing } from "./event-outbox.js";
import { type AnyHandler, type TaskHandler, type TaskOutcome, type WorkHandler, isGone, runTask } from "./run-task.js";

/**
 * How a runner speaking protocol 3 posts a streaming turn: the first post at once, then at most
 * one every 100 ms, the window doubling to 1 s while the turn streams (the tail rides on complete).
 */
// The first window is a quarter second: finer than a reader follows streaming text, and a typical
// turn's stream (a second or two) then leaves in about three posts. It doubles to 1 s, the most
// text ever waits.
export const DEFAULT_COALESCING: Coalescing = { windowMs: 250, maxWindowMs: 1_000 };

/** The backstop poll of a runner whose wake stream is open: a lost hint costs at most this. */
export const DEFAULT_STREAM_POLL_INTERVAL_MS = 10 * 60_000;

/** One handler per remote-session kind the runner takes; a kind without a handler is never claimed. */
export interface RunnerHandlers {
  "remote_session.create"?: TaskHandler<CreateAssignment>;
  "remote_session.send"?: TaskHandler<SendAssignment>;
  "remote_session.respond"?: TaskHandler<RespondAssignment>;
}

/**
 * Work that unblocks a running turn rather than starting one: it never waits for a free slot
 * (the turn it answers holds one), so a runner with every slot busy still takes it.
 */
const CONTROL_KINDS: ReadonlySet<string> = new Set(["remote_session.respond"]);

/** What the loop reports; ids, codes and counts only, never prompt text. */
export interface RunnerLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface RunRunnerOptions {
  client: RunnerClient;
  handlers: RunnerHandlers;
  /**
   * Handlers of work kinds the host registered on the same channel (protocol 4), by kind name
   * (`{ "automation.run": runAutomation }`): claimed, leased, heartbeaten and completed by this
   * one loop, with this one token and wake stream, sharing its slots with the turns. Idle against
   * a gateway older than protocol 4 (it serves no such kinds).
   */
  workHandlers?: Readonly<Record<string, WorkHandler>>;
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
  /** The backstop poll while the wake stream is down (or off). Default 60 s. */
  pollIntervalMs?: number;
  /**
   * The backstop poll while the wake stream is open: the most a lost hint delays a task (the
   * gateway's replay covers a stream that broke; this covers a hint its bus dropped). Default
   * 10 min (`DEFAULT_STREAM_POLL_INTERVAL_MS`), so an idle desktop asks about once per 10 minutes.
   */
  streamPollIntervalMs?: number;
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
  const hostKinds = hostKindsOf(options.workHandlers ?? {});
  const servesHostKinds = (options.gatewayProtocolVersion ?? 1) >= HOST_KINDS_PROTOCOL;
  if (hostKinds.length > 0 && !servesHostKinds) {
    options.logger?.warn("runner: the gateway predates the host's work kinds; their handlers stay idle", { kinds: hostKinds });
  }
  const handled = [...WORK_KINDS.filter((kind) => options.handlers[kind]), ...(servesHostKinds ? hostKinds : [])];
  const loop: RunnerLoop = {
    options,
    timers: options.timers ?? systemTimers,
    backoff: options.backoff ?? DEFAULT_BACKOFF,
    concurrency: options.concurrency ?? 1,
    claimsNext: (options.gatewayProtocolVersion ?? 1) >= CLAIM_NEXT_PROTOCOL,
    log: options.logger,
    stopping: new AbortController(),
    running: new Map(),
    handled,
    takesHostKinds: handled.some((kind) => !isBuiltInKind(kind)),
    // Control work is listened for only by a runner that can take it; else a busy runner rests.
    takesControl: handled.some((kind) => CONTROL_KINDS.has(kind)),
    kicked: false,
    kick: new AbortController(),
    readyTells: (options.gatewayProtocolVersion ?? 1) >= STREAM_READY_PROTOCOL,
    awaitingReady: false,
    streamOpen: false,
    streamDropped: false,
    afterDrop: null,
    streamTold: false,
    streamConnecting: false,
    streamTurnAt: 0,
    wakes: 0,
  };
  const idle = { pollIntervalMs: options.pollIntervalMs ?? 60_000, streamPollIntervalMs: options.streamPollIntervalMs ?? DEFAULT_STREAM_POLL_INTERVAL_MS };
  const wake = () => wakeLoop(loop);

  const stream =
    options.wakeStream === false
      ? undefined
      : openWakeStream({
          client: options.client,
          onEvent: (event) => onWakeEvent(loop, event),
          onConnect: () => {
            loop.streamConnecting = true;
          },
          onOpen: () => {
            streamAnswered(loop);
            loop.streamOpen = true;
            // A wake-up may have been missed while the stream was down: look, unless the stream's
            // first event will say whether anything waits.
            if (loop.readyTells) loop.awaitingReady = true;
            else wake();
          },
          onError: (error) => {
            streamAnswered(loop);
            report(loop, error, "wake stream");
            // A busy gateway gave the stream a turn: the look after a drop waits for it (its reopening tells).
            if (error.retryAfterMs !== undefined) loop.streamTurnAt = loop.timers.now() + error.retryAfterMs;
            // The stream went down: back to the short poll. Its reopening looks for work; until
            // then the first look comes at a random point of the short interval, not at once: a
            // fleet cut off together (a gateway restarting) must not ask together.
            if (loop.streamOpen) {
              loop.streamDropped = true;
              loop.kick.abort();
            }
            loop.streamOpen = false;
          },
          backoff: loop.backoff,
          timers: loop.timers,
          // The stream goes through the client's network, as its requests do (Electron's net.fetch…).
          ...(options.client.options.fetch ? { fetch: options.client.options.fetch } : {}),
          ...(options.wakeSilenceMs ? { silenceMs: options.wakeSilenceMs } : {}),
        });

  const looping = pollUntilStopped(loop, idle);

  return {
    wake,
    stop: async () => {
      loop.stopping.abort();
      stream?.close();
      await Promise.all([looping, stream?.closed, ...loop.running.values()]);
    },
  };
}

/** What the pieces of one runner loop share. */
interface RunnerLoop {
  readonly options: RunRunnerOptions;
  readonly timers: Timers;
  readonly backoff: Backoff;
  readonly concurrency: number;
  /** The gateway speaks `CLAIM_NEXT_PROTOCOL`: claims go through `claim-next`. */
  readonly claimsNext: boolean;
  readonly log: RunnerLogger | undefined;
  readonly stopping: AbortController;
  /** The running tasks, by task id. */
  readonly running: Map<string, Promise<void>>;
  /** The kinds with a handler (the host's only when the gateway serves them). */
  readonly handled: string[];
  /** Some of them are the host's. */
  readonly takesHostKinds: boolean;
  readonly takesControl: boolean;
  kicked: boolean;
  kick: AbortController;
  /** The wake stream is open: the backstop poll waits `streamPollIntervalMs`. */
  streamOpen: boolean;
  /** The gateway speaks `STREAM_READY_PROTOCOL`: a stream's first event says whether work waits. */
  readonly readyTells: boolean;
  /** The stream opened and its first event has not come yet. */
  awaitingReady: boolean;
  /** The open stream just went down: the sleep under way is cut to a random share of the short interval. */
  streamDropped: boolean;
  /** Where the rest after a drop is: its random first look (`cut`), the wait for the reopening's answer (`answer`) or for the stream's turn (`turn`). */
  afterDrop: "cut" | "answer" | "turn" | null;
  /** A stream's opening said no work waits since the last look: that counts as one. */
  streamTold: boolean;
  /** An attempt to (re)open the stream is under way (not answered yet). */
  streamConnecting: boolean;
  /** When the gateway last told the stream to come back (0: never). */
  streamTurnAt: number;
  // Wake-ups so far: one that came while a task held its slot may have found no slot to claim with.
  wakes: number;
}

/** A reopening was answered (opened, or refused): a rest waiting for that answer decides again. */
function streamAnswered(loop: RunnerLoop): void {
  loop.streamConnecting = false;
  if (loop.afterDrop === "answer") loop.kick.abort();
}

/** A hint wakes the loop; so does a stream's first event, unless it says no work waits. */
function onWakeEvent(loop: RunnerLoop, event: WakeEvent): void {
  const first = loop.awaitingReady;
  loop.awaitingReady = false;
  if (event.type === "remote_session_work_available") wakeLoop(loop);
  else if (event.type === "remote_session_stream_ready") {
    if (event.work) wakeLoop(loop);
    else {
      // As good as a look that found nothing: the rest under way (the short poll of a runner
      // whose stream was not open yet) becomes the open stream's.
      loop.streamTold = true;
      loop.kick.abort();
    }
  } else if (first) wakeLoop(loop); // a first event that does not tell: look, as at any open
}

function wakeLoop(loop: RunnerLoop): void {
  loop.wakes++;
  loop.kicked = true;
  loop.kick.abort();
}

function report(loop: RunnerLoop, error: unknown, during: string): void {
  if (loop.stopping.signal.aborted) return;
  const protocolError = RunnerProtocolError.isInstance(error) ? error : undefined;
  loop.log?.warn(`runner: ${during} failed`, { code: protocolError?.code ?? "unexpected", status: protocolError?.status });
  if (protocolError?.credentialRetired) loop.options.onCredentialRetired?.(protocolError);
}

/**
 * Drains work, then sleeps until a wake-up or the backstop poll — the long one while the wake
 * stream is open, the short one while it is down — backing off while the gateway fails, until stopped.
 */
async function pollUntilStopped(loop: RunnerLoop, idle: { pollIntervalMs: number; streamPollIntervalMs: number }): Promise<void> {
  const drain = loop.claimsNext ? drainNext : drainListed;
  let failures = 0;
  while (!loop.stopping.signal.aborted) {
    loop.kicked = false;
    loop.kick = new AbortController();
    loop.afterDrop = null;
    loop.streamTold = false;
    failures = (await drain(loop)) ? 0 : failures + 1;
    if (loop.kicked) continue;
    const pollMs = loop.streamOpen ? idle.streamPollIntervalMs : idle.pollIntervalMs;
    await rest(loop, failures === 0 ? pollMs : backoffDelay(failures - 1, loop.backoff), idle);
  }
}

// How long past the turn a busy gateway gave its stream the look after a drop waits for the
// stream's reopening (which comes at the turn) to be answered; at most the short poll.
const TURN_GRACE_MS = 5_000;

/** Sleeps `waitMs`, or until kicked, or longer while `restMore` says the look is not due. */
async function rest(loop: RunnerLoop, waitMs: number, idle: { pollIntervalMs: number; streamPollIntervalMs: number }): Promise<void> {
  for (let wait: number | null = waitMs; wait !== null; wait = restMore(loop, idle)) {
    await sleep(loop.timers, wait, AbortSignal.any([loop.kick.signal, loop.stopping.signal]));
    if (loop.kicked || loop.stopping.signal.aborted) return;
    loop.kick = new AbortController();
  }
}

/**
 * After a sleep ends: null to look now, else how much longer to sleep. A stream that went down
 * cuts the sleep to a random share of the short poll (a fleet cut off together does not ask
 * together). When that comes, against a gateway of protocol 5, whose reopened stream says whether
 * work waits: a stream back by then leaves nothing to ask; a reopening under way is waited for (at
 * most the short poll), and a turn the gateway gave the stream too — a fleet reconnecting to a
 * busy gateway asks nothing but its streams. One turn only: a stream refused again (a full
 * replica) or failing has its runner look, then poll as a runner without a stream does.
 */
function restMore(loop: RunnerLoop, idle: { pollIntervalMs: number; streamPollIntervalMs: number }): number | null {
  if (loop.streamTold && loop.streamOpen && !loop.streamDropped) {
    loop.streamTold = false;
    loop.afterDrop = null;
    return idle.streamPollIntervalMs;
  }
  if (loop.streamDropped) {
    loop.streamDropped = false;
    loop.afterDrop = "cut";
    return Math.round(loop.backoff.random() * idle.pollIntervalMs);
  }
  if (loop.afterDrop === null) return null;
  if (loop.streamOpen && loop.readyTells) {
    loop.afterDrop = null;
    return idle.streamPollIntervalMs;
  }
  if (!loop.readyTells || loop.afterDrop === "turn") return null;
  const toTurn = loop.streamTurnAt + Math.min(TURN_GRACE_MS, idle.pollIntervalMs) - loop.timers.now();
  if (!loop.streamOpen && toTurn > 0) {
    loop.afterDrop = "turn";
    return toTurn;
  }
  if (loop.afterDrop === "cut" && loop.streamConnecting) {
    loop.afterDrop = "answer";
    return idle.pollIntervalMs;
  }
  return null;
}

/** The kind names of the host's handlers, checked: a built-in kind or a malformed name is a programming error. */
function hostKindsOf(handlers: Readonly<Record<string, WorkHandler>>): string[] {
  const kinds = Object.keys(handlers).filter((kind) => handlers[kind]);
  for (const kind of kinds) {
    if (isBuiltInKind(kind) || !WorkKindNameSchema.safeParse(kind).success) {
      throw new TypeError(`workHandlers: "${kind}" is not a host's work kind (dotted lowercase words, not a remote_session kind)`);
    }
  }
  if (kinds.length + WORK_KINDS.length > MAX_CLAIM_KINDS) throw new TypeError(`workHandlers: at most ${MAX_CLAIM_KINDS - WORK_KINDS.length} kinds`);
  return kinds;
}

/** The handler of an assignment's kind, if the runner has one. */
function handlerOf(options: RunRunnerOptions, assignment: ClaimedAssignment): AnyHandler | undefined {
  // The kind picked the handler, so it gets the assignment of its own kind.
  const handler = isBuiltInKind(assignment.kind) ? options.handlers[assignment.kind] : options.workHandlers?.[assignment.kind];
  return handler as AnyHandler | undefined;
}

function start(loop: RunnerLoop, assignment: ClaimedAssignment): void {
  const { options, log, running, stopping, claimsNext } = loop;
  const handler = handlerOf(options, assignment);
  if (!handler) return;
  const wakesAtStart = loop.wakes;
  log?.info("runner: claimed", { taskId: assignment.taskId, kind: assignment.kind, attempt: assignment.attempt });
  const task = runTask(assignment, {
    client: options.client,
    handler,
    timers: loop.timers,
    backoff: loop.backoff,
    stopSignal: stopping.signal,
    eventsOnComplete: claimsNext,
    // The slot this task frees is taken again in the same request: no look in between. Only for a
    // remote-session task, and only its kinds: the gateway hands back such a next task again when
    // the completion is replayed, which it cannot do for a host's task.
    ...(claimsNext ? { coalescing: options.coalescing ?? DEFAULT_COALESCING } : {}),
    ...(claimsNext && isBuiltInKind(assignment.kind)
      ? { nextKinds: () => loop.handled.filter((kind) => isBuiltInKind(kind) && (CONTROL_KINDS.has(kind) || running.size - 1 < loop.concurrency)) }
      : {}),
    ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
  })
    .then((outcome) => {
      const { next: _, ...ended } = outcome;
      log?.info("runner: task ended", { ...ended, next: outcome.next?.taskId ?? null });
      options.onTaskEnd?.(outcome);
      return outcome;
    })
    .catch((error: unknown) => void report(loop, error, "task"))
    .then((outcome) => {
      running.delete(assignment.taskId);
      if (outcome?.next && !stopping.signal.aborted) start(loop, outcome.next);
      // The completion already looked for what this slot can take: a look now would find nothing,
      // unless work was announced while the slot was busy (its look may have come first), or the
      // loop also takes the host's kinds (which a completion never claims).
      else if (!outcome?.nothingNext || loop.wakes !== wakesAtStart || loop.takesHostKinds) wakeLoop(loop);
    });
  running.set(assignment.taskId, task);
}

function slotFree(loop: RunnerLoop): boolean {
  return loop.running.size < loop.concurrency;
}

function fits(loop: RunnerLoop, kind: string): boolean {
  return slotFree(loop) || CONTROL_KINDS.has(kind);
}

/** Protocol 3: one request per claim, for the kinds that fit now, until the gateway has none. */
async function drainNext(loop: RunnerLoop): Promise<boolean> {
  for (;;) {
    const kinds = loop.handled.filter((kind) => fits(loop, kind));
    if (kinds.length === 0 || loop.stopping.signal.aborted) return true;
    try {
      const { assignment, more } = await loop.options.client.claimNextReply(kinds, loop.stopping.signal);
      if (!assignment) return true;
      start(loop, assignment);
      // The gateway saw nothing else of these kinds waiting: asking again would find nothing.
      if (more === false) return true;
    } catch (error) {
      report(loop, error, "claim");
      return false;
    }
  }
}

/** Claims work until none is left (or only turns are left and every slot is busy); false when the gateway failed us. */
async function drainListed(loop: RunnerLoop): Promise<boolean> {
  const { options, stopping, running } = loop;
  for (;;) {
    if ((!slotFree(loop) && !loop.takesControl) || stopping.signal.aborted) return true;
    let items: Awaited<ReturnType<RunnerClient["work"]>>["items"];
    try {
      items = (await options.client.work(stopping.signal)).items;
    } catch (error) {
      report(loop, error, "work poll");
      return false;
    }
    let claimed = 0;
    // Several runners of one member see the same list: trying it in a random order keeps them
    // from all racing for the first task.
    for (const item of shuffled(items)) {
      if (stopping.signal.aborted) break;
      if (running.has(item.taskId) || !options.handlers[item.kind] || !fits(loop, item.kind)) continue;
      try {
        start(loop, await options.client.claim(item.taskId, stopping.signal));
        claimed++;
      } catch (error) {
        // Another runner won the race, or the task ended meanwhile.
        if (isGone(error)) continue;
        report(loop, error, "claim");
        return false;
      }
    }
    if (claimed === 0) return true;
  }
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
