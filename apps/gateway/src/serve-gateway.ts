import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorPayload, sessionError, silentLogger } from "@openwork/remote-session-core";
import { createGateway, type GatewayOptions } from "./create-gateway.js";
import { unexpectedErrorResponse } from "./unexpected-error.js";

/** What one process accepts before it answers 503, and how long a client may take to send its headers. */
export interface ConnectionLimits {
  /** Open connections (streams included). Default 4 096. */
  maxConnections: number;
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
 * Connections past `maxConnections` get a 503 at once and are closed, so a flood of streams or
 * slow headers cannot take the process's file descriptors from every other member.
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
  let open = 0;
  server.on("connection", (socket) => {
    if (open >= limits.maxConnections) {
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${BUSY.length}\r\n\r\n${BUSY}`);
      return;
    }
    open++;
    socket.once("close", () => open--);
  });
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
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}
