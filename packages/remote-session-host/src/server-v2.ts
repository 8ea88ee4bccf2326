// The host's MCP endpoint on `@modelcontextprotocol/server` 2.x (a separate entry: a host serving
// MCP with another SDK never loads this one).
export { createHostMcpEndpoint, type HostMcpEndpointOptions } from "./host-mcp-endpoint.js";
export type { ElicitAnswersOptions, McpEra, RemoteSessionEndpoint } from "@openwork/mcp-capability/server-v2";
