import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { registerRemoteSessionTools } from "@openwork/mcp-capability/sdk-v1";
import { type McpEndpointFactory, SERVER_INFO, statelessEndpoint } from "../mcp-endpoint.js";

/**
 * The endpoint on `@modelcontextprotocol/sdk` 1.x with ext-apps 1.7: the test gateway that proves
 * the v1 adapter through the v1 client, as hosts still on sdk 1.x run it.
 */
export const mcpEndpointV1 = (): McpEndpointFactory =>
  statelessEndpoint((source) => {
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {}, resources: {} } });
    registerRemoteSessionTools(server, { source });
    return { server, transport: new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) };
  });
