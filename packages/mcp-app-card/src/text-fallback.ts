import type { CardPayload } from "./card-payload.js";

/**
 * The card's facts as plain text, for hosts that show no card and for the model: the same title,
 * target, state, last activity and link the card renders.
 */
export function cardText(payload: CardPayload): string {
  const lines = [
    `Remote session "${payload.title ?? payload.sessionId}" (${payload.sessionId})`,
    `Target: ${payload.target ?? "unknown"} · State: ${payload.state ?? "unknown"}`,
  ];
  if (payload.lastActivityAt) lines.push(`Last activity: ${payload.lastActivityAt}`);
  if (payload.webUrl) lines.push(`Open in OpenWork Web: ${payload.webUrl}`);
  return lines.join("\n");
}
