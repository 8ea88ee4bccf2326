import { errorFacts, type Logger } from "@openwork/remote-session-core";
import { sseComment, sseFrame } from "@openwork/remote-session-core/wire";
import type { PushAuth, PushBus, PushHint } from "./push-bus.js";
import { keyOf, type PushStore, type Subscription } from "./push-store.js";
import { type ReadAs, watchSession } from "./watch-session.js";

export interface PushHubOptions {
  store: PushStore;
  read: ReadAs;
  /**
   * The process's wake hub: `waitForSession` resolves when a session may have changed (every
   * event a runner posts and every move of a desktop session tells it), and push hints between
   * replicas travel on its bus.
   */
  bus: Pick<PushBus, "waitForSession" | "subscribePush">;
  logger: Logger;
  /** SSE keepalive comments. Default 15 s. */
  keepaliveMs?: number;
  /** A stream looks for events it was not told of (a lost hint) this often. Default 5 s. */
  backstopMs?: number;
}

/** The `remote-session://<id>` URI of a session; null for any other URI. */
export const sessionIdOfUri = (uri: string): string | null => /^remote-session:\/\/(rs_[0-9a-z]{26})$/.exec(uri)?.[1] ?? null;

type LocalStream = { drain(): Promise<void>; close(): void; ended(): void };

interface LocalSession {
  auth: PushAuth;
  streams: Set<LocalStream>;
  watchers: Map<string, AbortController>;
}

/** What the hub's pieces share: its options and the sessions with a stream here. */
interface HubContext {
  options: PushHubOptions;
  keepaliveMs: number;
  backstopMs: number;
  local: Map<string, LocalSession>;
  // Watchers of one session woken by the same change share one read of it per caller: a read
  // asked for joins the one not started yet, which starts on the next turn of the event loop,
  // after every watcher woken with it has asked (so it sees what each was told of).
  nextReads: Map<string, Promise<Record<string, unknown> | null>>;
}

/**
 * One replica's side of push: the GET streams it holds, and for each MCP session with a stream
 * here, one watcher per subscription. A watcher announces a change in the store (exactly once
 * across replicas); every replica holding a stream of that session is told by a push hint on the
 * wake bus and sends the new events from the store, which is also what `Last-Event-ID` replays.
 */
export function createPushHub(options: PushHubOptions) {
  const hub: HubContext = {
    options,
    keepaliveMs: options.keepaliveMs ?? 15_000,
    backstopMs: options.backstopMs ?? 5_000,
    local: new Map(),
    nextReads: new Map(),
  };
  const { local } = hub;
  let closed = false;
  const unsubscribe = options.bus.subscribePush({
    push: (hints) => onHints(hub, hints),
    // After the bus reconnected hints sent meanwhile are lost: every stream and watcher looks again.
    resync: () => {
      for (const [id, session] of local) {
        for (const stream of session.streams) void stream.drain();
        void syncWatchers(hub, id).catch(() => {});
      }
    },
  });

  return {
    /** Opens a session's GET stream: what came after `lastEventId`, then each new event; `ended` runs once when it ends. */
    stream: (mcpSessionId: string, auth: PushAuth, lastEventId: string | null, ended: () => void = () => {}): Response =>
      openStream(hub, mcpSessionId, auth, lastEventId, ended),
    stats: () => ({
      pushStreams: [...local.values()].reduce((n, s) => n + s.streams.size, 0),
      pushWatchers: [...local.values()].reduce((n, s) => n + s.watchers.size, 0),
    }),
    close: async () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const [id, session] of [...local]) for (const entry of [...session.streams]) release(hub, id, entry);
    },
  };
}

export type PushHub = ReturnType<typeof createPushHub>;

/** The session read as `auth`, shared with the other watchers woken with this one (see `HubContext.nextReads`). */
function sharedRead(hub: HubContext, auth: PushAuth, sessionId: string): Promise<Record<string, unknown> | null> {
  const key = `${auth.token}\u0000${sessionId}`;
  let read = hub.nextReads.get(key);
  if (!read) {
    read = new Promise((resolve) => setImmediate(resolve)).then(() => {
      hub.nextReads.delete(key);
      return hub.options.read(auth, { sessionId });
    });
    hub.nextReads.set(key, read);
  }
  return read;
}

/** Watches one subscribed session until `signal` aborts or the caller may no longer read it, announcing each change in the store. */
function watch(hub: HubContext, mcpSessionId: string, auth: PushAuth, subscription: Subscription, signal: AbortSignal): Promise<void> {
  const { options } = hub;
  const message = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: subscription.uri } };
  return watchSession(
    { look: (as, sessionId) => sharedRead(hub, as, sessionId), read: options.read, bus: options.bus, logger: options.logger },
    { auth, sessionId: subscription.remoteSessionId, since: subscription.fingerprint },
    (version) => options.store.announce(keyOf(mcpSessionId, auth), subscription.uri, version, message),
    signal,
  );
}

/** Starts a watcher for each new subscription of a local session and stops those gone. */
async function syncWatchers(hub: HubContext, mcpSessionId: string): Promise<void> {
  const session = hub.local.get(mcpSessionId);
  if (!session) return;
  const subscriptions = await hub.options.store.subscriptions(keyOf(mcpSessionId, session.auth));
  const wanted = new Set(subscriptions.map((s) => s.uri));
  for (const [uri, controller] of session.watchers) {
    if (!wanted.has(uri)) {
      controller.abort();
      session.watchers.delete(uri);
    }
  }
  for (const subscription of subscriptions) {
    if (session.watchers.has(subscription.uri)) continue;
    const controller = new AbortController();
    session.watchers.set(subscription.uri, controller);
    watch(hub, mcpSessionId, session.auth, subscription, controller.signal).catch((error: unknown) => {
      if (!controller.signal.aborted) hub.options.logger.error("push: a watcher failed", { mcpSessionId, error: errorFacts(error) });
      // Its next sync starts it again.
      if (session.watchers.get(subscription.uri) === controller) session.watchers.delete(subscription.uri);
    });
  }
}

/** Acts on the push hints of the sessions with a stream here. */
function onHints(hub: HubContext, hints: readonly PushHint[]): void {
  for (const hint of hints) {
    const session = hub.local.get(hint.m);
    if (!session) continue;
    if (hint.k === "subs") void syncWatchers(hub, hint.m).catch(() => {});
    else if (hint.k === "gone") for (const entry of [...session.streams]) release(hub, hint.m, entry);
    else for (const stream of session.streams) void stream.drain();
  }
}

/** A session's GET stream (see `PushHub.stream`). */
function openStream(hub: HubContext, mcpSessionId: string, auth: PushAuth, lastEventId: string | null, ended: () => void): Response {
  let entry: LocalStream | undefined;
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      entry = startStream(hub, controller, { mcpSessionId, auth, lastEventId, ended });
    },
    cancel: () => release(hub, mcpSessionId, entry),
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" },
  });
}

/** Registers a just opened stream with its session, starts its timers, its first drain and the session's watchers. */
function startStream(
  hub: HubContext,
  controller: ReadableStreamDefaultController<Uint8Array>,
  opened: { mcpSessionId: string; auth: PushAuth; lastEventId: string | null; ended: () => void },
): LocalStream {
  const { mcpSessionId, auth, lastEventId, ended } = opened;
  const { store, logger } = hub.options;
  const encoder = new TextEncoder();
  let sent = lastEventId && /^\d{1,19}$/.test(lastEventId) ? lastEventId : null;
  let draining: Promise<void> = Promise.resolve();
  let timers: NodeJS.Timeout[] = [];
  const write = (text: string) => controller.enqueue(encoder.encode(text));
  // Serialized: events leave in order and each once, however many hints arrive.
  const drain = () =>
    (draining = draining
      .then(async () => {
        for (;;) {
          const events = await store.eventsAfter(keyOf(mcpSessionId, auth), sent);
          for (const event of events) write(sseFrame({ id: event.id, event: "message", data: JSON.stringify(event.message) }));
          if (events.length > 0) sent = events.at(-1)!.id;
          if (events.length < 500) return;
        }
      })
      .catch((error: unknown) => logger.warn("push: a stream could not read its events", { mcpSessionId, error: errorFacts(error) })));
  const close = () => {
    timers.forEach(clearInterval);
    try {
      controller.close();
    } catch {
      // Already closed by the client.
    }
  };
  const entry = { drain, close, ended };
  const session = hub.local.get(mcpSessionId) ?? { auth, streams: new Set(), watchers: new Map() };
  hub.local.set(mcpSessionId, session);
  session.streams.add(entry);
  write(sseComment("stream open"));
  timers = [setInterval(() => write(sseComment("keepalive")), hub.keepaliveMs), setInterval(() => void drain(), hub.backstopMs)];
  void drain();
  void syncWatchers(hub, mcpSessionId).catch((error: unknown) => logger.warn("push: could not load subscriptions", { mcpSessionId, error: errorFacts(error) }));
  return entry;
}

/** A stream ended: the session's watchers stop with its last stream here. */
function release(hub: HubContext, mcpSessionId: string, entry: LocalStream | undefined): void {
  const session = hub.local.get(mcpSessionId);
  if (!session || !entry || !session.streams.delete(entry)) return;
  entry.close();
  entry.ended();
  if (session.streams.size > 0) return;
  for (const controller of session.watchers.values()) controller.abort();
  hub.local.delete(mcpSessionId);
}
