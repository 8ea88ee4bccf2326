import type { McpServer } from "@modelcontextprotocol/server";
import { parseName, type RemoteSessionSource } from "@openwork/mcp-capability";
import { contextFromAuthInfo, createMemberSlots } from "@openwork/mcp-capability/internal";
import { errorFacts, type Logger, silentLogger } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import type { PushAuth, PushBus } from "./push-bus.js";
import { createPushHub } from "./push-hub.js";
import { registerSessionResources } from "./push-resources.js";
import { createSessionListens, type ServerIdentity, type SessionListens } from "./push-listen.js";
import { DEFAULT_PUSH_LIMITS, type PushEndpoint, type PushLimits, tooManyStreams, withPushSessions } from "./push-route.js";
import { createPushStore, DEFAULT_PUSH_RETENTION, migrateSessionPush, type PushRetention } from "./push-store.js";
import type { ReadAs } from "./watch-session.js";

// Retention runs this often on every replica (bounded batches; replicas overlapping is harmless).
const PRUNE_INTERVAL_MS = 60_000;
const READ = parseName("remote-session:read")!;
// A session gone or not the caller's: the watcher stops. Anything else may pass.
const NOT_READABLE = new Set(["unknown_session", "membership_required", "unknown_capability"]);
// Actions that move a session through the capability.
const MOVES = new Set(["create", "send", "respond", "stop"]);
// Resources one 2026-era listen may name (each is watched as its caller; a running cloud session's
// watcher holds one of the member's waiting reads, 16 by default). As den-api's own listens.
const MAX_LISTEN_URIS = 10;

export interface SessionPushOptions {
  /** The host's PostgreSQL client (pooled is fine: push only runs statements on it, never LISTEN). */
  sql: Sql;
  /** The process's wake hub (`createWakeHub` of `@openwork/desktop-target`): push hints travel on its bus. */
  hub: PushBus;
  /** The capability source the MCP endpoint serves; push reads sessions through it, as the caller. */
  source: RemoteSessionSource;
  logger?: Logger;
  /** Per member: open push streams on this process, stateful MCP sessions kept. Defaults in `DEFAULT_PUSH_LIMITS`. */
  limits?: Partial<PushLimits>;
  /** How long events and idle sessions are kept. Defaults in `DEFAULT_PUSH_RETENTION`. */
  retention?: Partial<PushRetention>;
  /** The PostgreSQL schema of the push tables (`start()` creates it when missing). Default: the handle's current schema. */
  schema?: string;
  /** Whether the caller may open one more MCP session now: null when it may, else the ms until it may (a 429). Default: always. */
  admitOpen?: (auth: PushAuth) => number | null;
}

/** Push on one process: mount `source`, `registerResources` and `endpoint`, then `start()`. */
export interface SessionPush {
  /** The source to serve: the one given, also announcing the moves it makes (so watchers of any target look at once). */
  readonly source: RemoteSessionSource;
  /**
   * Serves `remote-session://<id>` on an MCP server 2.x; on one answering the 2025 era (the
   * default) also declares `resources: { subscribe: true }` and serves subscribe and unsubscribe.
   */
  registerResources(server: McpServer, era?: "legacy" | "modern"): void;
  /**
   * Wraps the host's stateless MCP endpoint (one server per request, with `registerResources`):
   * `initialize` gets an `Mcp-Session-Id`, `GET` opens the push stream (`Last-Event-ID`), `DELETE` ends the session.
   */
  endpoint(inner: PushEndpoint): PushEndpoint;
  /**
   * Answers an MCP 2026-07-28 `subscriptions/listen` naming `remote-session://` resources (its
   * parsed body `message`), or null for any other request: put it in front of a 2026-era endpoint.
   */
  listen(message: unknown, request: Request, auth: PushAuth, serverInfo?: ServerIdentity): Promise<Response | null>;
  /**
   * For a host whose own 2026-era endpoint answers `subscriptions/listen` (for resources of its
   * own too): the `remote-session://` URIs among `uris` the caller may read, and `start`, which
   * tells of their changes (and at once of those moved since the versions in `since`) until
   * `signal` aborts. Acknowledge the honored URIs with your own, then call `start`.
   */
  watch: SessionListens["watch"];
  /** Push streams (GET streams and listens) and 2025-era watchers this process holds. */
  stats(): { pushStreams: number; pushWatchers: number };
  /** Applies the migrations and starts retention. Call once before serving. */
  start(): Promise<void>;
  /** Ends this process's streams and watchers and stops retention (the hub and `sql` are the host's). */
  close(): Promise<void>;
}

/**
 * Push of `remote-session://` resources in both MCP eras, from any replica: 2025-era clients
 * subscribe in stateful MCP sessions kept in PostgreSQL and hear `notifications/resources/updated`
 * on their GET stream, resumed after `Last-Event-ID`; 2026-era clients `subscriptions/listen`,
 * resumed from the session versions they last read. Hints between replicas travel on the host's
 * wake hub; push itself LISTENs on nothing.
 */
export function createSessionPush(options: SessionPushOptions): SessionPush {
  const { sql, logger = silentLogger } = options;
  const limits = { ...DEFAULT_PUSH_LIMITS, ...options.limits };
  const retention = { ...DEFAULT_PUSH_RETENTION, ...options.retention };
  const store = createPushStore(sql, (hints) => options.hub.publishPush(hints));
  const read: ReadAs = async (auth, body, signal) => {
    const ctx = contextFromAuthInfo(auth);
    if (!ctx) return null;
    const result = await options.source.execute(ctx, READ, { name: READ.name, body }, signal ? { signal } : {});
    const error = result.isError ? String(result.structuredContent.error) : null;
    if (error && NOT_READABLE.has(error)) return null;
    if (error) throw new Error(`remote-session:read answered ${error}`);
    return result.structuredContent;
  };
  const hub = createPushHub({ store, read, logger, bus: options.hub });
  const streams = createMemberSlots(limits.pushStreams);
  const listens = createSessionListens({ read, bus: options.hub, logger, streams, refused: () => tooManyStreams(limits), maxUris: MAX_LISTEN_URIS });
  let pruning: NodeJS.Timeout | undefined;
  // The desktop target announces its own changes; a move of another target's session (the cloud's)
  // is announced here, so its watchers look at once instead of at their next timeout.
  const source: RemoteSessionSource = {
    ...options.source,
    execute: async (ctx, parsed, input, execution) => {
      const result = await options.source.execute(ctx, parsed, input, execution);
      const sessionId = result.structuredContent.sessionId;
      const action = parsed.kind === "remoteSession" ? parseName(parsed.name)?.action : undefined;
      if (!result.isError && action && MOVES.has(action) && typeof sessionId === "string") options.hub.announceSession(ctx.organizationId, sessionId);
      return result;
    },
  };
  return {
    source,
    registerResources: (server, era) => registerSessionResources(server, { store, read }, era),
    endpoint: (inner) => withPushSessions(inner, { store, hub, limits, streams, ...(options.admitOpen ? { admitOpen: options.admitOpen } : {}) }),
    listen: listens.listen,
    watch: listens.watch,
    stats: () => {
      const { pushStreams, pushWatchers } = hub.stats();
      return { pushStreams: pushStreams + listens.count(), pushWatchers };
    },
    start: async () => {
      await migrateSessionPush(sql, options.schema ? { schema: options.schema } : {});
      if (pruning) return;
      pruning = setInterval(
        () => void store.prune(retention).catch((error: unknown) => logger.warn("push: retention failed", { error: errorFacts(error) })),
        PRUNE_INTERVAL_MS,
      );
      pruning.unref();
    },
    close: async () => {
      clearInterval(pruning);
      listens.closeAll();
      await hub.close();
    },
  };
}
