import { type Logger, silentLogger } from "@openwork/remote-session-core";
import { closeStreams, type EventsContext } from "./event-streams.js";
import { peekSession, watchSession } from "./session-watch.js";

/** Where a worker's events come from: its URL, the client token, the workspace's opencode mount. */
export interface EventSource {
  url: string;
  clientToken: string;
  workspaceId: string;
}

/** What the event stream said about one session since the gateway started listening. */
export interface SessionSignals {
  /** Text of replies still being written, by message id (the message list shows it only at the end). */
  liveText: ReadonlyMap<string, string>;
  /**
   * Messages whose live text was heard from the middle (the stream joined, or rejoined, after the
   * reply began): `liveText` holds only their tail.
   */
  liveTextPartial: ReadonlySet<string>;
  /** The error that ended the turn of `userMessageId` (null: a turn whose prompt was not seen). */
  error: { name: string; message: string; userMessageId: string | null } | null;
  /** The last status: null when idle. */
  status: { type: string; attempt?: number | undefined; message?: string | undefined; next?: number | undefined } | null;
  /** Permissions and questions asked or resolved so far (a count: a change means the requests changed). */
  requests?: number;
  /** Steps the engine finished (each reports its usage): a followed turn with a budget looks at each. */
  steps?: number;
  /** What each finished step the stream heard used, by its part id (see `withUnseenSteps`). */
  stepSpend?: ReadonlyMap<string, StepSpend>;
}

/** What one engine step reported it used (its `step-finish` part). */
export interface StepSpend {
  inputTokens: number;
  outputTokens: number;
  /** Micro-dollars; absent when the step was not priced. */
  costMicros?: number;
}

/** One caller's interest in a session's events. */
export interface SessionWatch {
  /** Resolves once the stream is connected (true) or failed (false). */
  readonly connected: Promise<boolean>;
  /** Whether the stream is up; when it is not, the caller polls. */
  live(): boolean;
  /** Changes so far that can end a wait (deltas are not among them). */
  version(): number;
  signals(): SessionSignals;
  /** Resolves when `version()` passes `seen`, the stream drops, or after `ms`. */
  changed(seen: number, ms: number): Promise<void>;
  close(): void;
}

export interface WorkerEventsOptions {
  fetch?: typeof fetch;
  logger?: Logger;
  /** How long a stream nobody watches stays open (the next read reuses it). Default 15 s. */
  lingerMs?: number;
  /** Streams open at once in this process; past it, callers poll. Default 64. */
  maxStreams?: number;
  /** A stream with no bytes this long is dropped (opencode beats every 10 s). Default 30 s. */
  silenceMs?: number;
}

export { STREAM_GAP } from "./apply-event.js";

/**
 * Follows cloud workers' event streams (`GET /workspace/:id/opencode/event`, SSE): one upstream
 * stream per worker workspace in this process, shared by every read waiting on one of its
 * sessions and closed `lingerMs` after the last one stops watching. It turns events into what
 * the message list cannot show: live text (`message.part.delta`), errors that end a turn before
 * any reply (`session.error`), retries (`session.status`), and the instant a turn ends. A stream
 * that fails is dropped and its watchers fall back to polling.
 */
export function createWorkerEvents(options: WorkerEventsOptions = {}) {
  const ctx: EventsContext = { options, logger: options.logger ?? silentLogger, lingerMs: options.lingerMs ?? 15_000, streams: new Map(), retired: new Map() };
  return {
    /**
     * Watches a session (opening its worker's stream if needed). Past `maxStreams`, or when the
     * stream fails, the watch is not live and the caller polls.
     */
    watch(source: EventSource, sessionId: string): SessionWatch {
      return watchSession(ctx, source, sessionId);
    },
    /** What is known of a session without opening anything (a read that does not wait). */
    peek(source: EventSource, sessionId: string): SessionSignals | undefined {
      return peekSession(ctx, source, sessionId);
    },
    /** Open upstream streams (for tests and metrics). */
    openStreams: () => ctx.streams.size,
    close(): void {
      closeStreams(ctx);
    },
  };
}

export type WorkerEvents = ReturnType<typeof createWorkerEvents>;
