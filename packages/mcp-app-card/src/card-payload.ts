import { z } from "zod";

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
});
export type CardPayload = z.infer<typeof CardPayloadSchema>;
