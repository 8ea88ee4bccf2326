import type { Server, ServerOptions } from "node:http";
import { createConnectionShare } from "./connection-share.js";

/** What one process accepts before it answers 503, and how long a client may take to send its headers. */
export interface ConnectionLimits {
  /** Open connections (streams included). Default 4 096. */
  maxConnections: number;
  /**
   * Connections one credential may hold when the process is full before its own are closed to
   * admit others. Default an eighth of `maxConnections`.
   */
  sharePerCredential?: number;
  /** Time to receive a request's headers. Default 10 s. */
  headersTimeoutMs: number;
  /** Idle time of a kept-alive connection between requests. Default 5 s. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: 4_096, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 };

const BUSY = JSON.stringify({ error: "server_busy", message: "this gateway process has too many open connections; retry shortly" });

/** The `node:http` server options that enforce the limits' timeouts (pass them when creating the server). */
export function serverOptionsOf(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.headersTimeoutMs * 3,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node enforces the two timeouts above only as often as it checks (30 s by default).
    connectionsCheckingInterval: Math.min(limits.headersTimeoutMs / 2, 5_000),
  };
}

/**
 * Holds `server` to `limits.maxConnections`: a new connection at the cap takes the slot of a
 * connection that has sent no whole request yet (idle, slow headers), else of one of the
 * credential holding the most connections past its share; only when there is neither is it
 * answered 503 and closed. So a flood of sockets, slow headers, slow bodies or streams costs the
 * one flooding, not every other member. Returns the share's counts.
 */
export function limitConnections(server: Server, limits: ConnectionLimits) {
  const share = createConnectionShare({
    maxConnections: limits.maxConnections,
    sharePerCredential: limits.sharePerCredential ?? Math.max(1, Math.floor(limits.maxConnections / 8)),
  });
  server.on("connection", (socket) => {
    if (share.admit(socket)) return;
    socket.end(
      `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${BUSY.length}\r\n\r\n${BUSY}`,
    );
  });
  server.on("request", (request, response) => share.request(request, response));
  return { stats: share.stats };
}
