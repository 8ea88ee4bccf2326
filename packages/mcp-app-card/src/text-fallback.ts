import type { CardNotified, CardPayload } from "./card-payload.js";

/**
 * The card's facts as plain text, for hosts that show no card and for the model: the same title,
 * target, state, last activity, origin, notifications and link the card renders.
 */
export function cardText(payload: CardPayload): string {
  const lines = [
    `Remote session "${payload.title ?? payload.sessionId}" (${payload.sessionId})`,
    `Target: ${payload.target ?? "unknown"} · State: ${payload.state ?? "unknown"}`,
  ];
  if (payload.spawnedBy) lines.push(`Spawned by: ${spawnedByName(payload.spawnedBy)}`);
  if (payload.lastActivityAt) lines.push(`Last activity: ${payload.lastActivityAt}`);
  for (const sent of payload.notified ?? []) lines.push(notifiedSentence(sent, sent.at));
  if (payload.webUrl) lines.push(`Open in OpenWork Web: ${payload.webUrl}`);
  return lines.join("\n");
}

/** The session that spawned this one, as the card names it: its title, else its id. */
const spawnedByName = (spawnedBy: { sessionId: string; title?: string | undefined }): string => spawnedBy.title || spawnedBy.sessionId;

/** "The member was notified by email at …", with the time written as the caller shows times. */
const notifiedSentence = (sent: CardNotified, time: string): string => `The member was notified by ${sent.channel} at ${time}`;
