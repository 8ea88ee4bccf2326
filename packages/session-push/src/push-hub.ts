import { createHash } from "node:crypto";
import { errorFacts, type Logger } from "@openwork/remote-session-core";
import { sseComment, sseFrame } from "@openwork/remote-session-core/wire";
import type { PushAuth, PushBus, PushHint } from "./push-bus.js";
import { keyOf, type PushStore, type Subscription } from "./push-store.js";

/**
 * A session read as the caller: the capability's `read` payload, null when the caller may not
 * read it (unknown, another member's), or a rejection when the target cannot answer now.
 */
export type ReadAs = (
  auth: PushAuth,
  body: { sessionId: string; cursor?: string; waitMs?: number },
  signal?: AbortSignal,
) => Promise<Record<string, unknown> | null>;

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

// A watcher looks again at least this often, whatever the target tells it.
const WATCH_TIMEOUT_MS = 25_000;
// States in which a read with waitMs waits (for targets without a change feed here).
const WAITABLE = new Set(["queued", "running", "waiting_input"]);

/**
 * What `notifications/resources/updated` is sent for: a slice's state, position, the text being
 * written, the reply, what it asks, its error. Anything else (its `next`, clocks) is not a change.
 */
export function fingerprintOf(slice: Record<string, unknown>): string {
  const pending = slice.pending as { id?: string; overdue?: boolean } | undefined;
  const facts = [
    slice.state,
    slice.cursor,
    slice.partialText,
    slice.finalAssistantText,
    pending?.id,
    pending?.overdue,
    slice.lastError,
    slice.retrying,
    slice.deferred,
  ];
  return createHash("sha256").update(JSON.stringify(facts)).digest("base64url");
}

/** The `remote-session://<id>` URI of a session; null for any other URI. */
export const sessionIdOfUri = (uri: string): string | null => /^remote-session:\/\/(rs_[0-9a-z]{26})$/.exec(uri)?.[1] ?? null;

interface LocalSession {
  auth: PushAuth;
  streams: Set<{ drain(): Promise<void>; close(): void; ended(): void }>;
  watchers: Map<string, AbortController>;
}

/**
 * One replica's side of push: the GET streams it holds, and for each MCP session with a stream
 * here, one watcher per subscription. A watcher announces a change in the store (exactly once
 * across replicas); every replica holding a stream of that session is told by a push hint on the
 * wake bus and sends the new events from the store, which is also what `Last-Event-ID` replays.
 */
export function createPushHub(options: PushHubOptions) {
  const { store, logger } = options;
  const keepaliveMs = options.keepaliveMs ?? 15_000;
  const backstopMs = options.backstopMs ?? 5_000;
  const local = new Map<string, LocalSession>();
  let closed = false;
  // Watchers of one session woken by the same change share one read of it per caller: a read
  // asked for joins the one not started yet, which starts on the next turn of the event loop,
  // after every watcher woken with it has asked (so it sees what each was told of).
  const nextReads = new Map<string, Promise<Record<string, unknown> | null>>();
  const sharedRead = (auth: PushAuth, sessionId: string) => {
    const key = `${auth.token}\u0000${sessionId}`;
    let read = nextReads.get(key);
    if (!read) {
      read = new Promise((resolve) => setImmediate(resolve)).then(() => {
        nextReads.delete(key);
        return options.read(auth, { sessionId });
      });
      nextReads.set(key, read);
    }
    return read;
  };

  const watch = async (mcpSessionId: string, auth: PushAuth, subscription: Subscription, signal: AbortSignal) => {
    let announced = subscription.fingerprint;
    const message = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: subscription.uri } };
    while (!signal.aborted) {
      // Listen before looking, so a change between the look and the wait is not missed.
      const changed = options.bus.waitForSession(subscription.remoteSessionId, WATCH_TIMEOUT_MS, signal);
      const slice = await sharedRead(auth, subscription.remoteSessionId).catch((error: unknown) => {
        // A target that cannot answer now (a waking worker): look again at the next change or timeout.
        logger.warn("push: a watched session could not be read", { mcpSessionId, error: errorFacts(error) });
        return undefined;
      });
      if (slice === null) return;
      if (slice === undefined) {
        await changed;
        continue;
      }
      const fingerprint = fingerprintOf(slice);
      if (fingerprint !== announced && !signal.aborted) {
        await store.announce(keyOf(mcpSessionId, auth), subscription.uri, fingerprint, message);
        announced = fingerprint;
      }
      // Targets whose changes are not notified here (the cloud) are watched with a waiting read,
      // which ends with the watcher; one refused (the member's waiting reads are all taken) waits for the change.
      const waits = slice.target !== "desktop" && WAITABLE.has(String(slice.state));
      const waited = () =>
        options.read(auth, { sessionId: subscription.remoteSessionId, cursor: String(slice.cursor), waitMs: WATCH_TIMEOUT_MS }, signal).catch(() => changed);
      await (waits ? Promise.race([changed, waited()]) : changed);
    }
  };

  /** Starts a watcher for each new subscription of a local session and stops those gone. */
  const syncWatchers = async (mcpSessionId: string) => {
    const session = local.get(mcpSessionId);
    if (!session) return;
    const subscriptions = await store.subscriptions(keyOf(mcpSessionId, session.auth));
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
      watch(mcpSessionId, session.auth, subscription, controller.signal).catch((error: unknown) => {
        if (!controller.signal.aborted) logger.error("push: a watcher failed", { mcpSessionId, error: errorFacts(error) });
        // Its next sync starts it again.
        if (session.watchers.get(subscription.uri) === controller) session.watchers.delete(subscription.uri);
      });
    }
  };

  const onHints = (hints: readonly PushHint[]) => {
    for (const hint of hints) {
      const session = local.get(hint.m);
      if (!session) continue;
      if (hint.k === "subs") void syncWatchers(hint.m).catch(() => {});
      else if (hint.k === "gone") for (const entry of [...session.streams]) release(hint.m, entry);
      else for (const stream of session.streams) void stream.drain();
    }
  };
  const unsubscribe = options.bus.subscribePush({
    push: onHints,
    // After the bus reconnected hints sent meanwhile are lost: every stream and watcher looks again.
    resync: () => {
      for (const [id, session] of local) {
        for (const stream of session.streams) void stream.drain();
        void syncWatchers(id).catch(() => {});
      }
    },
  });

  /** Opens a session's GET stream: what came after `lastEventId`, then each new event; `ended` runs once when it ends. */
  const stream = (mcpSessionId: string, auth: PushAuth, lastEventId: string | null, ended: () => void = () => {}): Response => {
    const encoder = new TextEncoder();
    let sent = lastEventId && /^\d{1,19}$/.test(lastEventId) ? lastEventId : null;
    let draining: Promise<void> = Promise.resolve();
    let timers: NodeJS.Timeout[] = [];
    let entry: LocalStream | undefined;
    type LocalStream = { drain(): Promise<void>; close(): void; ended(): void };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
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
        entry = { drain, close, ended };
        const session = local.get(mcpSessionId) ?? { auth, streams: new Set(), watchers: new Map() };
        local.set(mcpSessionId, session);
        session.streams.add(entry);
        write(sseComment("stream open"));
        timers = [setInterval(() => write(sseComment("keepalive")), keepaliveMs), setInterval(() => void drain(), backstopMs)];
        void drain();
        void syncWatchers(mcpSessionId).catch((error: unknown) =>
          logger.warn("push: could not load subscriptions", { mcpSessionId, error: errorFacts(error) }),
        );
      },
      cancel: () => release(mcpSessionId, entry),
    });
    return new Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" },
    });
  };

  /** A stream ended: the session's watchers stop with its last stream here. */
  const release = (mcpSessionId: string, entry: { close(): void; ended(): void } | undefined) => {
    const session = local.get(mcpSessionId);
    if (!session || !entry || !session.streams.delete(entry as never)) return;
    entry.close();
    entry.ended();
    if (session.streams.size > 0) return;
    for (const controller of session.watchers.values()) controller.abort();
    local.delete(mcpSessionId);
  };

  return {
    stream,
    stats: () => ({
      pushStreams: [...local.values()].reduce((n, s) => n + s.streams.size, 0),
      pushWatchers: [...local.values()].reduce((n, s) => n + s.watchers.size, 0),
    }),
    close: async () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const [id, session] of [...local]) for (const entry of [...session.streams]) release(id, entry);
    },
  };
}

export type PushHub = ReturnType<typeof createPushHub>;
