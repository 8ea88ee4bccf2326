import { z } from "zod";
import { GatewayIdSchema } from "./common.js";

/** SSE event names on `GET events`; the `data` line carries the same `type`. */
export const WAKE_EVENT_TYPES = ["remote_session_work_available", "keepalive"] as const;

/**
 * A hint that work may be waiting: the runner answers with `GET work`. It carries ids only,
 * never prompt text, and a lost hint costs at most one backstop poll.
 */
export const WorkAvailableEventSchema = z.looseObject({
  type: z.literal("remote_session_work_available"),
  /** The stream position; the same value is the SSE `id`, sent back as `Last-Event-ID`. */
  cursor: z.string().max(64),
  taskId: GatewayIdSchema.optional(),
});

/** Sent every 15 s on an idle stream so both ends can tell a silent stream from a dead one. */
export const KeepaliveEventSchema = z.looseObject({ type: z.literal("keepalive") });

export const WakeEventSchema = z.discriminatedUnion("type", [WorkAvailableEventSchema, KeepaliveEventSchema]);
export type WakeEvent = z.infer<typeof WakeEventSchema>;
