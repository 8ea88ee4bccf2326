import type { MemberSlots } from "@openwork/mcp-capability/internal";
import { errorFacts, type Logger } from "@openwork/remote-session-core";
import { sseComment, sseFrame } from "@openwork/remote-session-core/wire";
import type { PushAuth, PushBus } from "./push-bus.js";
import { sessionIdOfUri } from "./push-hub.js";
import { memberKey } from "./push-route.js";
import { fingerprintOf, type ReadAs, watchSession } from "./watch-session.js";

/** The revision whose `subscriptions/listen` this serves. */
export const LISTEN_REVISION = "2026-07-28";
/** A listen's `_meta` key (client → server): each `remote-session://` URI's version the client last read. */
export const SESSION_VERSIONS_META = "io.openwork/sessionVersions";
/** The version of a session, on its resource's contents and on each `notifications/resources/updated` for it. */
export const SESSION_VERSION_META = "io.openwork/sessionVersion";
const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";

/** The server's name and version, stamped on a listen's graceful end as the SDK stamps its results. */
export interface ServerIdentity {
  name: string;
  version: string;
}

export interface SessionListensOptions {
  read: ReadAs;
  bus: Pick<PushBus, "waitForSession">;
  logger: Logger;
  /** The member's push streams on this process (shared with the 2025 era's GET streams). */
  streams: MemberSlots;
  /** The 429 a member past its streams gets. */
  refused(): Response;
  /** Resources one listen may name. */
  maxUris: number;
  /** SSE keepalive comments. Default 15 s. */
  keepaliveMs?: number;
}

/** What a `subscriptions/listen` asks of push: its id, its `remote-session://` URIs, the versions it last read. */
interface ListenAsk {
  id: string | number;
  uris: string[];
  since: Record<string, string>;
}

/**
 * `subscriptions/listen` (MCP 2026-07-28) for `remote-session://` resources, from any replica:
 * after the acknowledgement each named session the caller may read is watched as the caller
 * (hints on the host's wake hub, as the 2025 era's watchers), and every change is sent as
 * `notifications/resources/updated` with the session's version. The revision has no resume; a
 * listener that comes back names, in the listen's `_meta` (`io.openwork/sessionVersions`), the
 * version it last read of each session, and is told at once of those that moved since. Sessions
 * it may not read (unknown, another member's) are left out of the acknowledged filter alike.
 */
export function createSessionListens(options: SessionListensOptions) {
  const open = new Set<() => void>();
  return {
    /** Answers a listen naming `remote-session://` resources; null for any other message (the host's endpoint answers it). */
    listen: async (message: unknown, request: Request, auth: PushAuth, serverInfo?: ServerIdentity): Promise<Response | null> => {
      const ask = listenAsk(message);
      // Not JSON as it says: the host's endpoint answers it (415).
      if (!ask || !isJson(request.headers.get("content-type"))) return null;
      if (ask.uris.length > options.maxUris) return jsonRpcError(ask.id, -32602, `at most ${options.maxUris} resources per subscriptions/listen`);
      const release = options.streams.enter(memberKey(auth));
      if (!release) return options.refused();
      // The watchers stop with the client (its request's signal) or with a graceful end.
      const watching = new AbortController();
      const stop = () => {
        watching.abort();
        release();
      };
      try {
        const watched = await watchUris(options, auth, ask.uris, { since: ask.since, signal: AbortSignal.any([watching.signal, request.signal]) });
        return listenStream(options.keepaliveMs ?? 15_000, { ask, watched, signal: request.signal, stop, open, ...(serverInfo ? { serverInfo } : {}) });
      } catch (error) {
        stop();
        throw error;
      }
    },
    /**
     * For a host's own `subscriptions/listen` (one that also serves resources of its own): the
     * `remote-session://` URIs among `uris` that `auth` may read, and `start`, which watches them
     * until `signal` aborts, calling `updated` at once for each moved since its version in
     * `since`, then for each change. Call `start` once the host acknowledged the listen.
     */
    watch: (auth: PushAuth, uris: readonly string[], watched: { since?: Record<string, string>; signal: AbortSignal }) =>
      watchUris(options, auth, uris, { since: watched.since ?? {}, signal: watched.signal }),
    /** Listens open on this process. */
    count: () => open.size,
    /** Ends every listen gracefully (the listen's result): the process is going away. */
    closeAll: () => {
      for (const close of [...open]) close();
    },
  };
}

export type SessionListens = ReturnType<typeof createSessionListens>;

/** The listen's ask when `message` is a 2026-07-28 `subscriptions/listen` naming at least one `remote-session://` URI; null otherwise. */
function listenAsk(message: unknown): ListenAsk | null {
  if (!isObject(message) || message.method !== "subscriptions/listen") return null;
  const id = message.id;
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  if ((typeof id !== "string" && typeof id !== "number") || meta[PROTOCOL_VERSION_META] !== LISTEN_REVISION) return null;
  const filter = isObject(params.notifications) ? params.notifications : {};
  const uris = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions.filter((uri): uri is string => typeof uri === "string") : [];
  if (!uris.some((uri) => uri.startsWith("remote-session://"))) return null;
  const asked = isObject(meta[SESSION_VERSIONS_META]) ? meta[SESSION_VERSIONS_META] : {};
  const since = Object.fromEntries(Object.entries(asked).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  return { id, uris: [...new Set(uris)], since };
}

/** What a listen watches: the URIs honored, and how to start telling of their changes. */
export interface WatchedUris {
  honored: string[];
  /** Tells of each change with `updated`; `gone` runs once none of the sessions can be read any more (deleted, access lost). */
  start(updated: (uri: string, version: string) => void, gone?: () => void): void;
}

/** The URIs among `uris` naming a session `auth` may read (see `SessionListens.watch`). */
async function watchUris(
  options: SessionListensOptions,
  auth: PushAuth,
  uris: readonly string[],
  watched: { since: Record<string, string>; signal: AbortSignal },
): Promise<WatchedUris> {
  // Each URI's version now; null when its target cannot answer now (the session is the caller's:
  // one that is not reads as null, not as a failure), which the watcher's first look settles.
  const versions = new Map<string, string | null>();
  await Promise.all(
    uris.map(async (uri) => {
      const sessionId = sessionIdOfUri(uri);
      if (!sessionId) return;
      const slice = await options.read(auth, { sessionId }, watched.signal).catch((error: unknown) => {
        if (!watched.signal.aborted) options.logger.warn("push: a listened session could not be read", { error: errorFacts(error) });
        return undefined;
      });
      if (slice !== null) versions.set(uri, slice ? fingerprintOf(slice) : null);
    }),
  );
  const parts = { look: (as: PushAuth, id: string) => options.read(as, { sessionId: id }), read: options.read, bus: options.bus, logger: options.logger };
  return {
    honored: uris.filter((uri) => versions.has(uri)),
    start: (updated, gone = () => {}) => {
      let watching = versions.size;
      const ended = () => {
        if (--watching === 0 && !watched.signal.aborted) gone();
      };
      for (const [uri, version] of versions) {
        const since = watched.since[uri] ?? null;
        if (version !== null && since !== null && since !== version) updated(uri, version);
        watchSession(parts, { auth, sessionId: sessionIdOfUri(uri)!, since: version ?? since }, (next) => updated(uri, next), watched.signal)
          .catch((error: unknown) => {
            if (!watched.signal.aborted) options.logger.error("push: a listen's watcher failed", { error: errorFacts(error) });
          })
          .finally(ended);
      }
    },
  };
}

/** The listen's SSE stream: the acknowledgement, what moved since the versions named, then each change until it ends. */
function listenStream(
  keepaliveMs: number,
  opened: { ask: ListenAsk; watched: WatchedUris; signal: AbortSignal; stop: () => void; open: Set<() => void>; serverInfo?: ServerIdentity },
): Response {
  const { ask, watched, signal, stop, open, serverInfo } = opened;
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let keepalive: NodeJS.Timeout | undefined;
  let ended = false;
  const write = (text: string) => {
    if (!ended) controller.enqueue(encoder.encode(text));
  };
  const send = (method: string, params: Record<string, unknown>) =>
    write(
      sseFrame({
        event: "message",
        data: JSON.stringify({ jsonrpc: "2.0", method, params: { ...params, _meta: { ...(params._meta as object), [SUBSCRIPTION_ID_META]: ask.id } } }),
      }),
    );
  const updated = (uri: string, version: string) => send("notifications/resources/updated", { uri, _meta: { [SESSION_VERSION_META]: version } });
  const end = (graceful: boolean) => {
    if (ended) return;
    if (graceful) {
      const _meta = { [SUBSCRIPTION_ID_META]: ask.id, ...(serverInfo ? { [SERVER_INFO_META]: serverInfo } : {}) };
      write(sseFrame({ event: "message", data: JSON.stringify({ jsonrpc: "2.0", id: ask.id, result: { resultType: "complete", _meta } }) }));
    }
    ended = true;
    clearInterval(keepalive);
    signal.removeEventListener("abort", cut);
    open.delete(closeGracefully);
    stop();
    try {
      controller.close();
    } catch {
      // Already closed by the client.
    }
  };
  const cut = () => end(false);
  const closeGracefully = () => end(true);
  const body = new ReadableStream<Uint8Array>({
    start: (streamController) => {
      controller = streamController;
      const { honored } = watched;
      send("notifications/subscriptions/acknowledged", { notifications: honored.length ? { resourceSubscriptions: honored } : {} });
      if (honored.length === 0) return end(true);
      // Nothing left to watch (every session deleted or no longer the caller's): the listen ends.
      watched.start(updated, closeGracefully);
      open.add(closeGracefully);
      keepalive = setInterval(() => write(sseComment("keepalive")), keepaliveMs);
      if (signal.aborted) cut();
      else signal.addEventListener("abort", cut, { once: true });
    },
    cancel: cut,
  });
  return new Response(body, {
    status: 200,
    // Proxies that buffer (nginx) would hold notifications back.
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive", "x-accel-buffering": "no" },
  });
}

const jsonRpcError = (id: string | number, code: number, message: string) => Response.json({ jsonrpc: "2.0", id, error: { code, message } });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const isJson = (contentType: string | null) => (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase() === "application/json";
