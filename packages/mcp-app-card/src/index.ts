export type { CardPayload } from "./card-payload.js";
export { cardText } from "./text-fallback.js";
export { CARD_RESOURCE_URI, CARD_MIME_TYPE, CARD_TOOL_META, CARD_RESOURCE, cardResourceContents } from "./card-resource.js";
