import type { RemoteSessionSource } from "@openwork/mcp-capability";
import type { McpAuth } from "@openwork/remote-session-host";

export type { McpAuth };

/** Answers one stateless MCP request for a verified caller. */
export type McpEndpoint = (request: Request, auth: McpAuth) => Promise<Response>;

/** Builds the endpoint around the capability source: one per SDK generation. */
export type McpEndpointFactory = (source: RemoteSessionSource) => McpEndpoint;

export const SERVER_INFO = { name: "openwork-remote-session-gateway", version: "0.0.0" } as const;

interface StatelessParts {
  server: { connect(transport: never): Promise<void> };
  transport: { handleRequest(request: Request, options: { authInfo: McpAuth }): Promise<Response> };
}

/**
 * A stateless endpoint: one server and transport per request, nothing held that another replica
 * needs. `build` makes them for one request (an SDK generation's own classes).
 */
export const statelessEndpoint =
  (build: (source: RemoteSessionSource) => StatelessParts): McpEndpointFactory =>
  (source) =>
  async (request, auth) => {
    const { server, transport } = build(source);
    await server.connect(transport as never);
    return transport.handleRequest(request, { authInfo: auth });
  };
