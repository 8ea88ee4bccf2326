import { z } from "zod";

/** One notification that told the member about the session's waiting request (a read's `notified`). */
export const CardNotifiedSchema = z.looseObject({
  /** The channel's kind: `email`, `webhook`, or a host's own. */
  channel: z.string().max(40),
  /** When it was sent, ISO 8601. */
  at: z.string().max(40),
});
export type CardNotified = z.infer<typeof CardNotifiedSchema>;

/** What the card shows: the facts a tool result carries in `structuredContent`. */
export const CardPayloadSchema = z.looseObject({
  sessionId: z.string().max(160),
  title: z.string().max(120).optional(),
  target: z.string().max(32).optional(),
  /** The target's own label ("Cloud", "Desktop", "Echo"), shown as it is. */
  targetLabel: z.string().max(60).optional(),
  state: z.string().max(40).optional(),
  lastActivityAt: z.string().max(40).optional(),
  webUrl: z.string().max(2_048).optional(),
  /** The notifications sent for the request the session waits on, oldest first (a read's `notified`). */
  notified: z.array(CardNotifiedSchema).max(20).optional(),
  /** The session whose agent started this one, when one did. */
  spawnedBy: z.looseObject({ sessionId: z.string().max(160), title: z.string().max(120).optional() }).optional(),
});
export type CardPayload = z.infer<typeof CardPayloadSchema>;
