import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorPayload, sessionError, silentLogger } from "@openwork/remote-session-core";
import { createConnectionShare } from "./connection-share.js";
import { createGateway, type GatewayOptions } from "./create-gateway.js";
import { unexpectedErrorResponse } from "@openwork/remote-session-host";

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

const starting = () =>
  Response.json(errorPayload(sessionError("internal_error", "the gateway is starting; retry shortly", { retryAfterMs: 1_000 })), {
    status: 503,
    headers: { "retry-after": "1" },
  });

/**
 * Serves the gateway on `host:port` (port 0: a free one). The base URL must be known before the
 * gateway is built (it is the runner-token audience), so the handler is attached after listening.
 * At `maxConnections` a new connection takes the slot of a connection that has sent no whole
 * request yet (idle, slow headers), else of one of the credential holding the most connections
 * past its share; only when there is neither is it answered 503 and closed. So a flood of
 * sockets, slow headers, slow bodies or streams costs the one flooding, not every other member.
 */
export async function serveGateway(
  options: Omit<GatewayOptions, "baseUrl"> & { port: number; host?: string; publicUrl?: string; connectionLimits?: Partial<ConnectionLimits> },
) {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits };
  let handler: ((request: Request) => Response | Promise<Response>) | undefined;
  const logger = options.logger ?? silentLogger;
  const server = serve({
    // The port is open before the gateway is built (migrations run first): a request that early
    // is told to retry, and whatever escapes the gateway still gets the typed body.
    fetch: async (request: Request) => {
      if (!handler) return starting();
      try {
        return await handler(request);
      } catch (error) {
        return unexpectedErrorResponse(logger, "gateway server", request, error);
      }
    },
    port: options.port,
    hostname: options.host ?? "127.0.0.1",
    serverOptions: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.headersTimeoutMs * 3,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node enforces the two timeouts above only as often as it checks (30 s by default).
      connectionsCheckingInterval: Math.min(limits.headersTimeoutMs / 2, 5_000),
    },
  }) as Server;
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
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const serverUrl = `http://${options.host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}`;
  const baseUrl = options.publicUrl ?? serverUrl;
  const gateway = await createGateway({ ...options, baseUrl });
  handler = gateway.fetch;
  return {
    ...gateway,
    baseUrl,
    /** Where this process listens (differs from `baseUrl` behind a proxy). */
    serverUrl,
    /** Open connections, those that have sent no whole request yet, and the credentials holding the rest. */
    connections: share.stats,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}
