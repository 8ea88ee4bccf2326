import { registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CARD_RESOURCE, CARD_RESOURCE_URI, cardResourceContents } from "./card-resource.js";

/** Registers the card resource on an `@modelcontextprotocol/sdk` 1.x McpServer, through ext-apps 1.7's helper. */
export function registerCardResource(server: McpServer): void {
  const { name, ...config } = CARD_RESOURCE;
  registerAppResource(server, name, CARD_RESOURCE_URI, config, async () => cardResourceContents());
}
