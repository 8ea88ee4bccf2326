import { type RemoteSessionSource, parseName } from "@openwork/mcp-capability";
import { contextFromAuthInfo } from "@openwork/mcp-capability/server-v2";
import type { WakeHub } from "@openwork/desktop-target";
import { errorFacts, type Logger } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { createPushHub, type ReadAs } from "./push-hub.js";
import { createPushStore, migratePush } from "./push-store.js";

// Retention runs this often on every replica (bounded batches; replicas overlapping is harmless).
const PRUNE_INTERVAL_MS = 60_000;
const READ = parseName("remote-session:read")!;
// A session gone or not the caller's: the watcher stops. Anything else may pass.
const NOT_READABLE = new Set(["unknown_session", "membership_required", "unknown_capability"]);
// Actions that move a session through the capability.
const MOVES = new Set(["create", "send", "respond", "stop"]);

/** The push path of one replica: its store, its hub (streams and watchers), and retention. */
export async function startPush(options: { sql: Sql; hub: WakeHub; source: RemoteSessionSource; logger: Logger }) {
  const { sql, logger } = options;
  await migratePush(sql);
  const store = createPushStore(sql);
  const read: ReadAs = async (auth, body, signal) => {
    const ctx = contextFromAuthInfo(auth);
    if (!ctx) return null;
    const result = await options.source.execute(ctx, READ, { name: READ.name, body }, signal ? { signal } : {});
    const error = result.isError ? String(result.structuredContent.error) : null;
    if (error && NOT_READABLE.has(error)) return null;
    if (error) throw new Error(`remote-session:read answered ${error}`);
    return result.structuredContent;
  };
  const hub = createPushHub({ sql, store, read, logger, waitForChange: (id, timeoutMs, signal) => options.hub.waitForSession(id, timeoutMs, signal) });
  await hub.ready;
  const pruning = setInterval(() => void store.prune().catch((error: unknown) => logger.warn("push: retention failed", { error: errorFacts(error) })), PRUNE_INTERVAL_MS);
  pruning.unref();
  // The desktop target notifies its own changes; a move of another target's session (the cloud's)
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
    store,
    hub,
    read,
    /** The capability source to serve: the one given, announcing the session moves it makes. */
    source,
    close: async () => {
      clearInterval(pruning);
      await hub.close();
    },
  };
}
