import { bearerToken } from "@openwork/runner-protocol/server";
import { Hono } from "hono";
import type { McpGate } from "./host-options.js";
import type { McpAuth } from "./mcp-auth.js";

/** What the host's MCP endpoint route needs of the composition. */
export interface McpRouteParts {
  baseUrl: string;
  verifyMcpToken(token: string): Promise<McpAuth | null>;
  mcpGate: McpGate;
  /** Whether the endpoint serves GET streams (push on). */
  streams: boolean;
}

/** Where the host serves its MCP endpoint, and how it presents it. */
export interface McpRoutesOptions {
  /** The endpoint's path, e.g. `/mcp/agent`. */
  path: string;
  /** Answers one request of a verified caller (the host's MCP server: SDK 1.x, 2.x, its own). */
  endpoint: (request: Request, auth: McpAuth) => Promise<Response>;
  /** OAuth authorization servers advertised in the protected-resource metadata. Default none. */
  authorizationServers?: readonly string[];
  /** The metadata's `resource_name`. */
  resourceName?: string;
}

/**
 * The MCP endpoint and its protected-resource metadata (RFC 9728, at both places clients look):
 * a bearer token verified by the host's auth hook (session credentials included), a 401 naming
 * the metadata otherwise, then the per-member gate.
 */
export function createMcpRoutes(parts: McpRouteParts, options: McpRoutesOptions): Hono {
  const { path } = options;
  const resourceMetadataUrl = `${parts.baseUrl}/.well-known/oauth-protected-resource${path}`;
  const protectedResource = {
    resource: `${parts.baseUrl}${path}`,
    // Advertised only when the host serves one: a client told of an authorization server that
    // is not there reports an OAuth failure instead of "this token is not valid".
    ...(options.authorizationServers?.length ? { authorization_servers: options.authorizationServers } : {}),
    scopes_supported: ["mcp:read", "mcp:write"],
    bearer_methods_supported: ["header"],
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  };
  const app = new Hono();
  app.get(`/.well-known/oauth-protected-resource${path}`, (c) => c.json(protectedResource));
  app.get(`${path}/.well-known/oauth-protected-resource`, (c) => c.json(protectedResource));
  app.all(path, async (c) => {
    const token = bearerToken(c.req.header("authorization"));
    if (!token) return unauthorized("a bearer token is required", resourceMetadataUrl);
    const auth = await parts.verifyMcpToken(token);
    if (!auth) return unauthorized("this token is not valid for this gateway", resourceMetadataUrl);
    if (c.req.method === "GET" && !parts.streams) return c.json({ error: "method_not_allowed", message: "this endpoint is stateless: POST JSON-RPC" }, 405);
    return parts.mcpGate(c.req.raw, auth, (request) => options.endpoint(request, auth));
  });
  return app;
}

function unauthorized(description: string, resourceMetadataUrl: string): Response {
  return Response.json(
    { error: "invalid_token", error_description: description },
    {
      status: 401,
      headers: { "www-authenticate": `Bearer error="invalid_token", error_description="${description}", resource_metadata="${resourceMetadataUrl}"` },
    },
  );
}
