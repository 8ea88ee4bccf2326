import { type Logger, silentLogger } from "@openwork/remote-session-core";
import { followSse } from "@openwork/remote-session-core/wire";
import { type OpencodeSessionUpdate, readOpencodeEvent } from "@openwork/opencode-client";

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

/** Put where live text resumes after the event stream reconnected: deltas sent meanwhile were not heard. */
export const STREAM_GAP = " […the gateway's event stream reconnected here; some of this reply may be missing…] ";
// Live text is bounded per message: reads cut it further, this only stops a runaway reply.
const LIVE_TEXT_LIMIT = 200_000;
// Sessions remembered per stream beyond the watched ones.
const IDLE_SESSIONS_KEPT = 500;
// Dropped streams whose live text is kept for the next stream of the same worker workspace.
const RETIRED_KEPT = 64;

/** Live text heard by a stream that dropped, by session, then message. */
type HeldText = Map<string, Map<string, { text: string; partial: boolean }>>;

interface Tracked {
  signals: { liveText: Map<string, string>; liveTextPartial: Set<string>; error: SessionSignals["error"]; status: SessionSignals["status"]; requests: number };
  /** Text parts whose creation this stream heard, by message id: their deltas are the whole text. */
  partsHeard: Map<string, Set<string>>;
  /** Live text carried over from a stream that dropped: kept while nothing new comes for it. */
  carried: Set<string>;
  lastUserMessageId: string | null;
  version: number;
  watchers: number;
  wake: Set<() => void>;
}

interface Stream {
  sessions: Map<string, Tracked>;
  watchers: number;
  live: boolean;
  connected: Promise<boolean>;
  abort: AbortController;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Follows cloud workers' event streams (`GET /workspace/:id/opencode/event`, SSE): one upstream
 * stream per worker workspace in this process, shared by every read waiting on one of its
 * sessions and closed `lingerMs` after the last one stops watching. It turns events into what
 * the message list cannot show: live text (`message.part.delta`), errors that end a turn before
 * any reply (`session.error`), retries (`session.status`), and the instant a turn ends. A stream
 * that fails is dropped and its watchers fall back to polling.
 */
export function createWorkerEvents(options: WorkerEventsOptions = {}) {
  const logger = options.logger ?? silentLogger;
  const lingerMs = options.lingerMs ?? 15_000;
  const streams = new Map<string, Stream>();
  const retired = new Map<string, HeldText>();
  const keyOf = (source: EventSource) => `${source.url}\u0000${source.workspaceId}\u0000${source.clientToken}`;

  const track = (key: string, stream: Stream, sessionId: string): Tracked => {
    let tracked = stream.sessions.get(sessionId);
    if (!tracked) {
      tracked = { signals: emptySignals(), partsHeard: new Map(), carried: new Set(), lastUserMessageId: null, version: 0, watchers: 0, wake: new Set() };
      // What an earlier stream heard is the text known so far of a reply that stopped meanwhile.
      for (const [messageId, held] of retired.get(key)?.get(sessionId) ?? []) {
        tracked.signals.liveText.set(messageId, held.text);
        if (held.partial) tracked.signals.liveTextPartial.add(messageId);
        tracked.carried.add(messageId);
      }
      retired.get(key)?.delete(sessionId);
      stream.sessions.set(sessionId, tracked);
      forgetIdle(stream);
    }
    return tracked;
  };
  const retire = (key: string, stream: Stream) => {
    const held: HeldText = new Map();
    for (const [sessionId, tracked] of stream.sessions) {
      const { liveText, liveTextPartial } = tracked.signals;
      if (liveText.size > 0) held.set(sessionId, new Map([...liveText].map(([id, text]) => [id, { text, partial: liveTextPartial.has(id) }])));
    }
    retired.delete(key);
    if (held.size > 0) retired.set(key, held);
    for (const old of retired.keys()) if (retired.size > RETIRED_KEPT) retired.delete(old);
  };
  const bump = (tracked: Tracked) => {
    tracked.version++;
    for (const wake of tracked.wake) wake();
  };
  const drop = (key: string, stream: Stream, reason: string) => {
    if (streams.get(key) !== stream) return;
    streams.delete(key);
    retire(key, stream);
    stream.live = false;
    clearTimeout(stream.linger);
    stream.abort.abort();
    for (const tracked of stream.sessions.values()) for (const wake of tracked.wake) wake();
    if (reason !== "idle") logger.warn("cloud target: worker event stream dropped; reads poll", { reason });
  };

  const open = (key: string, source: EventSource): Stream => {
    let resolveConnected!: (up: boolean) => void;
    const stream: Stream = {
      sessions: new Map(),
      watchers: 0,
      live: false,
      connected: new Promise((resolve) => (resolveConnected = resolve)),
      abort: new AbortController(),
      linger: undefined,
    };
    streams.set(key, stream);
    void consume(
      source,
      stream,
      (update) => apply(stream, update),
      () => {
        stream.live = true;
        resolveConnected(true);
      },
    )
      .catch((error: unknown) => error)
      .then((error) => {
        resolveConnected(false);
        drop(key, stream, error instanceof Error ? error.message : "ended");
      });
    return stream;
  };

  const consume = async (source: EventSource, stream: Stream, onUpdate: (update: OpencodeSessionUpdate) => void, onConnected: () => void) => {
    const url = `${source.url.replace(/\/+$/, "")}/workspace/${encodeURIComponent(source.workspaceId)}/opencode/event`;
    await followSse({
      open: async (signal) => {
        const response = await (options.fetch ?? fetch)(url, {
          headers: { accept: "text/event-stream", authorization: `Bearer ${source.clientToken}` },
          redirect: "error",
          signal,
        });
        if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
        return response.body;
      },
      onMessage: (message) => {
        const update = readOpencodeEvent(message.data);
        if (update?.type === "connected") onConnected();
        else if (update) onUpdate(update);
      },
      silenceMs: options.silenceMs ?? 30_000,
      signal: stream.abort.signal,
    });
  };

  const apply = (stream: Stream, update: OpencodeSessionUpdate) => {
    const tracked = stream.sessions.get(update.sessionId);
    if (!tracked) return;
    const { signals } = tracked;
    switch (update.type) {
      case "text-part": {
        // A text part is created empty before its first delta: heard here, its deltas are whole.
        const heard = tracked.partsHeard.get(update.messageId) ?? new Set();
        tracked.partsHeard.set(update.messageId, heard.add(update.partId));
        return;
      }
      case "text-delta": {
        const known = signals.liveText.get(update.messageId);
        // The reply went on while no stream listened: the start is known, what was said meanwhile is not.
        const gap = tracked.carried.delete(update.messageId) ? STREAM_GAP : "";
        // The first delta of a part whose creation this stream did not hear: the start is missing.
        if (known === undefined && (update.partId === undefined || !tracked.partsHeard.get(update.messageId)?.has(update.partId))) {
          signals.liveTextPartial.add(update.messageId);
        }
        const text = (known ?? "") + gap + update.delta;
        signals.liveText.set(update.messageId, text.slice(0, LIVE_TEXT_LIMIT));
        return;
      }
      case "message": {
        if (update.role === "user" && update.messageId !== tracked.lastUserMessageId) {
          // A new turn: an error seen before belongs to an older one.
          tracked.lastUserMessageId = update.messageId;
          signals.error = null;
        }
        if (update.ended) {
          signals.liveText.delete(update.messageId);
          signals.liveTextPartial.delete(update.messageId);
          tracked.partsHeard.delete(update.messageId);
          tracked.carried.delete(update.messageId);
          return bump(tracked);
        }
        return;
      }
      case "error": {
        // opencode reports one failure twice, the second time with a stack: the first one counts.
        if (!update.error || signals.error) return;
        const { name, data } = update.error;
        signals.error = { name, message: firstLine(data?.message ?? name), userMessageId: tracked.lastUserMessageId };
        return bump(tracked);
      }
      case "status":
        signals.status = update.status.type === "idle" ? null : update.status;
        return bump(tracked);
      case "idle":
        signals.status = null;
        return bump(tracked);
      // The turn starts or stops waiting on the human: a waiting read looks again.
      case "asked":
      case "resolved":
        signals.requests++;
        return bump(tracked);
      // Tool calls and usage reach a reader through the message list.
      case "tool":
      case "usage":
        return;
    }
  };

  const forgetIdle = (stream: Stream) => {
    let excess = stream.sessions.size - IDLE_SESSIONS_KEPT;
    for (const [id, tracked] of stream.sessions) {
      if (excess <= 0) break;
      if (tracked.watchers > 0) continue;
      stream.sessions.delete(id);
      excess--;
    }
  };

  return {
    /**
     * Watches a session (opening its worker's stream if needed). Past `maxStreams`, or when the
     * stream fails, the watch is not live and the caller polls.
     */
    watch(source: EventSource, sessionId: string): SessionWatch {
      const key = keyOf(source);
      let stream = streams.get(key);
      if (!stream && streams.size >= (options.maxStreams ?? 64)) return offline();
      stream ??= open(key, source);
      const current = stream;
      clearTimeout(current.linger);
      current.watchers++;
      const tracked = track(key, current, sessionId);
      tracked.watchers++;
      let closed = false;
      return {
        connected: current.connected,
        live: () => current.live,
        version: () => tracked.version,
        signals: () => tracked.signals,
        changed: (seen, ms) =>
          new Promise<void>((resolve) => {
            if (tracked.version !== seen || (!current.live && streams.get(key) !== current)) return resolve();
            const done = () => {
              clearTimeout(timer);
              tracked.wake.delete(done);
              resolve();
            };
            const timer = setTimeout(done, ms);
            tracked.wake.add(done);
          }),
        close: () => {
          if (closed) return;
          closed = true;
          tracked.watchers--;
          current.watchers--;
          if (current.watchers === 0) current.linger = setTimeout(() => drop(key, current, "idle"), lingerMs);
        },
      };
    },
    /** What is known of a session without opening anything (a read that does not wait). */
    peek(source: EventSource, sessionId: string): SessionSignals | undefined {
      const key = keyOf(source);
      const tracked = streams.get(key)?.sessions.get(sessionId);
      const held = retired.get(key)?.get(sessionId);
      if (tracked || !held) return tracked?.signals;
      const signals = emptySignals();
      for (const [messageId, { text, partial }] of held) {
        signals.liveText.set(messageId, text);
        if (partial) signals.liveTextPartial.add(messageId);
      }
      return signals;
    },
    /** Open upstream streams (for tests and metrics). */
    openStreams: () => streams.size,
    close(): void {
      for (const [key, stream] of [...streams]) drop(key, stream, "idle");
      retired.clear();
    },
  };
}

export type WorkerEvents = ReturnType<typeof createWorkerEvents>;

function emptySignals(): Tracked["signals"] {
  return { liveText: new Map(), liveTextPartial: new Set(), error: null, status: null, requests: 0 };
}

function offline(): SessionWatch {
  const signals: SessionSignals = emptySignals();
  return {
    connected: Promise.resolve(false),
    live: () => false,
    version: () => 0,
    signals: () => signals,
    changed: (_seen, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => {},
  };
}

/** An engine error message as a person reads it: its first line (opencode may append a stack), bounded. */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).slice(0, 500);
}
