import { RESOURCE_MIME_TYPE, registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CARD_HTML } from "./card-html.js";

/** The card's URI; versioned, so a changed card is a new resource hosts do not confuse with a cached one. */
export const CARD_RESOURCE_URI = "ui://openwork/remote-session/v1/card.html";

/** `text/html;profile=mcp-app`. */
export const CARD_MIME_TYPE = RESOURCE_MIME_TYPE;

/** The `_meta` a tool carries to be rendered with the card. */
export const CARD_TOOL_META = { ui: { resourceUri: CARD_RESOURCE_URI } } as const;

/** Registers the card resource on an McpServer (sdk 1.32 + ext-apps 1.7). */
export function registerCardResource(server: McpServer): void {
  registerAppResource(
    server,
    "remote-session-card",
    CARD_RESOURCE_URI,
    { description: "A remote session: title, target, state, last activity and a link to OpenWork Web.", _meta: { ui: { prefersBorder: true } } },
    async () => ({
      contents: [{ uri: CARD_RESOURCE_URI, mimeType: CARD_MIME_TYPE, text: CARD_HTML, _meta: { ui: { prefersBorder: true } } }],
    }),
  );
}
