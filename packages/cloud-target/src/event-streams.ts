import type { Logger } from "@openwork/remote-session-core";
import { followSse } from "@openwork/remote-session-core/wire";
import { type OpencodeSessionUpdate, readOpencodeEvent } from "@openwork/opencode-client";
import { applyEvent } from "./apply-event.js";
import type { EventSource, SessionSignals, StepSpend, WorkerEventsOptions } from "./worker-events.js";

// Dropped streams whose live text is kept for the next stream of the same worker workspace.
const RETIRED_KEPT = 64;

/** Live text heard by a stream that dropped, by session, then message. */
export type HeldText = Map<string, Map<string, { text: string; partial: boolean }>>;

export interface Tracked {
  signals: {
    liveText: Map<string, string>;
    liveTextPartial: Set<string>;
    error: SessionSignals["error"];
    status: SessionSignals["status"];
    requests: number;
    steps: number;
    stepSpend: Map<string, StepSpend>;
  };
  /** Text parts whose creation this stream heard, by message id: their deltas are the whole text. */
  partsHeard: Map<string, Set<string>>;
  /** Live text carried over from a stream that dropped: kept while nothing new comes for it. */
  carried: Set<string>;
  lastUserMessageId: string | null;
  version: number;
  watchers: number;
  wake: Set<() => void>;
}

export interface Stream {
  sessions: Map<string, Tracked>;
  watchers: number;
  live: boolean;
  connected: Promise<boolean>;
  abort: AbortController;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/** What one `createWorkerEvents` holds: its streams by worker workspace, and what dropped ones heard. */
export interface EventsContext {
  readonly options: WorkerEventsOptions;
  readonly logger: Logger;
  readonly lingerMs: number;
  readonly streams: Map<string, Stream>;
  readonly retired: Map<string, HeldText>;
}

export function keyOf(source: EventSource): string {
  return `${source.url}\u0000${source.workspaceId}\u0000${source.clientToken}`;
}

export function openStream(ctx: EventsContext, key: string, source: EventSource): Stream {
  let resolveConnected!: (up: boolean) => void;
  const stream: Stream = {
    sessions: new Map(),
    watchers: 0,
    live: false,
    connected: new Promise((resolve) => (resolveConnected = resolve)),
    abort: new AbortController(),
    linger: undefined,
  };
  ctx.streams.set(key, stream);
  void consume(
    ctx,
    source,
    stream,
    (update) => applyEvent(stream, update),
    () => {
      stream.live = true;
      resolveConnected(true);
    },
  )
    .catch((error: unknown) => error)
    .then((error) => {
      resolveConnected(false);
      dropStream(ctx, key, stream, error instanceof Error ? error.message : "ended");
    });
  return stream;
}

async function consume(
  ctx: EventsContext,
  source: EventSource,
  stream: Stream,
  onUpdate: (update: OpencodeSessionUpdate) => void,
  onConnected: () => void,
): Promise<void> {
  const url = `${source.url.replace(/\/+$/, "")}/workspace/${encodeURIComponent(source.workspaceId)}/opencode/event`;
  await followSse({
    open: async (signal) => {
      const response = await (ctx.options.fetch ?? fetch)(url, {
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
    silenceMs: ctx.options.silenceMs ?? 30_000,
    signal: stream.abort.signal,
  });
}

export function dropStream(ctx: EventsContext, key: string, stream: Stream, reason: string): void {
  if (ctx.streams.get(key) !== stream) return;
  ctx.streams.delete(key);
  retire(ctx, key, stream);
  stream.live = false;
  clearTimeout(stream.linger);
  stream.abort.abort();
  for (const tracked of stream.sessions.values()) for (const wake of tracked.wake) wake();
  if (reason !== "idle") ctx.logger.warn("cloud target: worker event stream dropped; reads poll", { reason });
}

function retire(ctx: EventsContext, key: string, stream: Stream): void {
  const { retired } = ctx;
  const held: HeldText = new Map();
  for (const [sessionId, tracked] of stream.sessions) {
    const { liveText, liveTextPartial } = tracked.signals;
    if (liveText.size > 0) held.set(sessionId, new Map([...liveText].map(([id, text]) => [id, { text, partial: liveTextPartial.has(id) }])));
  }
  retired.delete(key);
  if (held.size > 0) retired.set(key, held);
  for (const old of retired.keys()) if (retired.size > RETIRED_KEPT) retired.delete(old);
}

export function closeStreams(ctx: EventsContext): void {
  for (const [key, stream] of [...ctx.streams]) dropStream(ctx, key, stream, "idle");
  ctx.retired.clear();
}

export function emptySignals(): Tracked["signals"] {
  return { liveText: new Map(), liveTextPartial: new Set(), error: null, status: null, requests: 0, steps: 0, stepSpend: new Map() };
}
