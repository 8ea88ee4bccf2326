// The adapters for an `@modelcontextprotocol/server` 2.x host: den-api's two tools on a server of
// the host's, or a whole endpoint serving both MCP eras.
export { builtinSkillsExtension, type RemoteSessionToolsOptions, registerRemoteSessionTools } from "./server-v2-tools.js";
export {
  createRemoteSessionEndpoint,
  DEFAULT_SERVER_INFO,
  type McpEndpoint,
  type McpEra,
  type RemoteSessionEndpoint,
  type RemoteSessionEndpointOptions,
} from "./mcp-endpoint-v2.js";
export type { ElicitAnswersOptions } from "./elicit-answers.js";
