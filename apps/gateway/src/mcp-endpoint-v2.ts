import { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { registerRemoteSessionTools } from "@openwork/mcp-capability/server-v2";
import { type McpEndpointFactory, SERVER_INFO, statelessEndpoint } from "./mcp-endpoint.js";

/**
 * The MCP endpoint on `@modelcontextprotocol/server` 2.x, what the reference gateway serves.
 * `configure` adds tools to each request's server (a benchmark's no-op baseline, a host's own tools).
 */
export const mcpEndpointV2 = (configure?: (server: McpServer) => void): McpEndpointFactory =>
  statelessEndpoint((source) => {
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {}, resources: {} } });
    registerRemoteSessionTools(server, { source });
    configure?.(server);
    return { server, transport: new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) };
  });
