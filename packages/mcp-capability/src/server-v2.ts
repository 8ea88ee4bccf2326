import type { McpServer } from "@modelcontextprotocol/server";
import { CARD_TOOL_META } from "@openwork/mcp-app-card";
import { registerCardResource } from "@openwork/mcp-app-card/server-v2";
import { createToolHandlers, EXECUTE_TOOL, type RemoteSessionToolsOptions, SEARCH_TOOL } from "./mcp-tools.js";

export { contextFromAuthInfo, type AuthInfoLike, type ContextOf, type RemoteSessionToolsOptions } from "./mcp-tools.js";

/**
 * Puts den-api's two tools on an `@modelcontextprotocol/server` 2.x McpServer:
 * `search_capabilities` and `execute_capability`, with the card resource linked on the latter
 * through the same `_meta` keys ext-apps 2.x's `registerAppTool` writes.
 */
export function registerRemoteSessionTools(server: McpServer, options: RemoteSessionToolsOptions): void {
  const handlers = createToolHandlers(options);
  const { name: searchName, ...search } = SEARCH_TOOL;
  server.registerTool(searchName, search, (args, ctx) => handlers.search(args, ctx.http?.authInfo));

  const { name: executeName, ...execute } = EXECUTE_TOOL;
  const withCard = options.card !== false;
  if (withCard) registerCardResource(server);
  server.registerTool(executeName, { ...execute, ...(withCard ? { _meta: CARD_TOOL_META } : {}) }, (args, ctx) =>
    handlers.execute(args, ctx.http?.authInfo),
  );
}
