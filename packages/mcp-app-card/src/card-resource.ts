import { CARD_HTML } from "./card-html.js";

/** The card's URI; versioned, so a changed card is a new resource hosts do not confuse with a cached one. */
export const CARD_RESOURCE_URI = "ui://openwork/remote-session/v1/card.html";

/** `text/html;profile=mcp-app`, the MCP Apps resource MIME type (ext-apps' `RESOURCE_MIME_TYPE`). */
export const CARD_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * The `_meta` a tool carries to be rendered with the card: the current key and the legacy flat
 * one, as ext-apps' `registerAppTool` writes them, so hosts of either era find the card.
 */
export const CARD_TOOL_META = { ui: { resourceUri: CARD_RESOURCE_URI }, "ui/resourceUri": CARD_RESOURCE_URI } as const;

/** How the card resource is listed: its name and metadata. */
export const CARD_RESOURCE = {
  name: "remote-session-card",
  description: "A remote session: title, target, state, last activity and a link to OpenWork Web.",
  _meta: { ui: { prefersBorder: true } },
} as const;

/** What `resources/read` of the card answers (each content item carries the MIME type itself, as MCP Apps requires). */
export function cardResourceContents() {
  return { contents: [{ uri: CARD_RESOURCE_URI, mimeType: CARD_MIME_TYPE, text: CARD_HTML, _meta: { ui: { prefersBorder: true } } }] };
}
