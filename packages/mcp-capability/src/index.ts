export {
  type RemoteSessionSource,
  type RemoteSessionSourceOptions,
  type CapabilityMatch,
  type ExecuteInput,
  createRemoteSessionSource,
} from "./create-remote-session-source.js";
export { type CapabilityContext, type RemoteSessionPolicy, DEFAULT_POLICY } from "./capability-context.js";
export { ACTIONS, type Action, parseName, capabilityName } from "./parse-name.js";
export type { ToolResult } from "./to-tool-result.js";
export { type McpAdapterOptions, registerRemoteSessionTools } from "./mcp-server-adapter.js";
