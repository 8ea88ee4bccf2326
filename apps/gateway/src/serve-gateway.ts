import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createGateway, type GatewayOptions } from "./create-gateway.js";

/**
 * Serves the gateway on `host:port` (port 0: a free one). The base URL must be known before the
 * gateway is built (it is the runner-token audience), so the handler is attached after listening.
 */
export async function serveGateway(options: Omit<GatewayOptions, "baseUrl"> & { port: number; host?: string; publicUrl?: string }) {
  let handler: ((request: Request) => Response | Promise<Response>) | undefined;
  const server = serve({ fetch: (request: Request) => handler!(request), port: options.port, hostname: options.host ?? "127.0.0.1" }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const baseUrl = options.publicUrl ?? `http://${options.host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}`;
  const gateway = await createGateway({ ...options, baseUrl });
  handler = gateway.fetch;
  return {
    ...gateway,
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}
