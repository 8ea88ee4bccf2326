import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { errorPayload, sessionError, silentLogger } from "@openwork/remote-session-core";
import { createGateway, type GatewayOptions } from "./create-gateway.js";
import { unexpectedErrorResponse } from "@openwork/remote-session-host";
import { type ConnectionLimits, limitConnections, listenWithLimits, serverOptionsOf, sizeConnectionLimits } from "@openwork/remote-session-host/node";

const starting = () =>
  Response.json(errorPayload(sessionError("internal_error", "the gateway is starting; retry shortly", { retryAfterMs: 1_000 })), {
    status: 503,
    headers: { "retry-after": "1" },
  });

/**
 * Serves the gateway on `host:port` (port 0: a free one). The base URL must be known before the
 * gateway is built (it is the runner-token audience), so the handler is attached after listening.
 * The host's connection limits hold the process (`limitConnections`), sized by its file and heap
 * limits unless given (`sizeConnectionLimits`): requests' connections, and wake streams apart
 * (the host's stream budget, `processLimits.runnerStreams`, is `maxStreams`); it listens with
 * their backlog (`listenWithLimits`).
 */
export async function serveGateway(
  options: Omit<GatewayOptions, "baseUrl"> & { port: number; host?: string; publicUrl?: string; connectionLimits?: Partial<ConnectionLimits> },
) {
  const limits = { ...sizeConnectionLimits(), ...options.connectionLimits };
  let handler: ((request: Request) => Response | Promise<Response>) | undefined;
  const logger = options.logger ?? silentLogger;
  const server = createAdaptorServer({
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
    serverOptions: serverOptionsOf(limits),
  }) as Server;
  const share = limitConnections(server, limits);
  const host = options.host ?? "127.0.0.1";
  const { port } = await listenWithLimits(server, { port: options.port, host }, limits);
  const serverUrl = `http://${host}:${port}`;
  const baseUrl = options.publicUrl ?? serverUrl;
  const gateway = await createGateway({
    ...options,
    baseUrl,
    processLimits: { runnerStreams: limits.maxStreams, ...options.processLimits },
    connectionStats: share.stats,
  });
  handler = gateway.fetch;
  return {
    ...gateway,
    baseUrl,
    /** Where this process listens (differs from `baseUrl` behind a proxy). */
    serverUrl,
    /** The connection limits the process runs with (sized, or given). */
    connectionLimits: limits,
    /** Request connections, those that have sent no whole request yet, the credentials holding the rest, and the wake streams. */
    connections: share.stats,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}
