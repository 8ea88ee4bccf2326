import { sseFrame } from "@openwork/remote-session-core/wire";
import { z } from "zod";
import { GatewayIdSchema } from "./common.js";

/** SSE event names on `GET events`; the `data` line carries the same `type`. */
export const WAKE_EVENT_TYPES = ["remote_session_work_available", "remote_session_stream_ready", "keepalive"] as const;

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

/**
 * A protocol-5 stream's first event (`STREAM_READY_PROTOCOL`): whether work waits for this runner
 * as the stream opens. Hints that come after it cover everything queued later, so a runner told
 * `work: false` has nothing to ask for: a fleet reconnecting at once (a gateway restart) costs
 * its streams, not a claim each. A gateway that cannot tell says `true`.
 */
export const StreamReadyEventSchema = z.looseObject({ type: z.literal("remote_session_stream_ready"), work: z.boolean() });

/** Sent every 15 s on an idle stream so both ends can tell a silent stream from a dead one. */
export const KeepaliveEventSchema = z.looseObject({ type: z.literal("keepalive") });

export const WakeEventSchema = z.discriminatedUnion("type", [WorkAvailableEventSchema, StreamReadyEventSchema, KeepaliveEventSchema]);
export type WakeEvent = z.infer<typeof WakeEventSchema>;

/**
 * One wake event as the stream carries it: the SSE `event` is the event's `type`, `data` the event
 * as JSON, and `id` (a hint's cursor) what the runner sends back as `Last-Event-ID`.
 */
export function wakeFrame(event: WakeEvent, id?: string): string {
  return sseFrame({ ...(id === undefined ? {} : { id }), event: event.type, data: JSON.stringify(event) });
}
