import type { McpServer } from "@modelcontextprotocol/server";
import { CARD_MIME_TYPE, CARD_RESOURCE, CARD_RESOURCE_URI, cardResourceContents } from "./card-resource.js";

/**
 * Registers the card resource on an `@modelcontextprotocol/server` 2.x McpServer. It lists the
 * resource with the MCP Apps MIME type, as ext-apps 2.x's `registerAppResource` does, without
 * needing ext-apps installed.
 */
export function registerCardResource(server: McpServer): void {
  const { name, ...config } = CARD_RESOURCE;
  server.registerResource(name, CARD_RESOURCE_URI, { ...config, mimeType: CARD_MIME_TYPE }, async () => cardResourceContents());
}
