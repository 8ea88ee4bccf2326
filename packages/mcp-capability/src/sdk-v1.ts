import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CARD_TOOL_META } from "@openwork/mcp-app-card";
import { registerCardResource } from "@openwork/mcp-app-card/sdk-v1";
import { createToolHandlers, EXECUTE_TOOL, type RemoteSessionToolsOptions, SEARCH_TOOL } from "./mcp-tools.js";

export type { RemoteSessionToolsOptions } from "./mcp-tools.js";

/**
 * Puts den-api's two tools on an `@modelcontextprotocol/sdk` 1.x McpServer (with ext-apps 1.7):
 * `search_capabilities` and `execute_capability`, with the card resource linked on the latter.
 */
export function registerRemoteSessionTools(server: McpServer, options: RemoteSessionToolsOptions): void {
  const handlers = createToolHandlers(options);
  const { name: searchName, ...search } = SEARCH_TOOL;
  server.registerTool(searchName, search, (args, extra) => handlers.search(args, extra.authInfo));

  const { name: executeName, ...execute } = EXECUTE_TOOL;
  const run = (args: Parameters<typeof handlers.execute>[0], extra: { authInfo?: Parameters<typeof handlers.execute>[1]; signal?: AbortSignal }) =>
    handlers.execute(args, extra.authInfo, extra.signal);
  if (options.card === false) {
    server.registerTool(executeName, execute, run);
    return;
  }
  registerCardResource(server);
  registerAppTool(server, executeName, { ...execute, _meta: CARD_TOOL_META }, run);
}
