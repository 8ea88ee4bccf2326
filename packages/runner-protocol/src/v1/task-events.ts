import { z } from "zod";
import { AttemptSchema, ErrorDetailSchema, GatewayIdSchema, LocalIdSchema, RequestIdSchema, TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";

const MessageIdSchema = z.string().min(1).max(LIMITS.localId);

/** Payload schemas by event type: the union below is derived from this one table. */
const PAYLOADS = {
  /** The local session the runner made (or reused) for this task. */
  "session.bound": z.strictObject({ localSessionId: LocalIdSchema, workspaceId: LocalIdSchema.optional() }),
  /** A piece of assistant text as it streams; pieces of one message concatenate in order. */
  "assistant.delta": z.strictObject({ messageId: MessageIdSchema, text: z.string().max(LIMITS.deltaText) }),
  /** The whole text of one assistant message once it is complete; replaces its deltas. */
  "assistant.final": z.strictObject({ messageId: MessageIdSchema, text: z.string().max(LIMITS.finalText) }),
  /** What the local session is doing. */
  status: z.strictObject({
    status: z.enum(["running", "idle", "waiting_input"]),
    waitingFor: z.enum(["permission", "question"]).optional(),
  }),
  /** A tool call's progress; repeated with the same callId as its status changes. */
  "tool.call": z.strictObject({
    callId: z.string().min(1).max(LIMITS.localId),
    name: z.string().min(1).max(LIMITS.toolName),
    status: z.enum(["pending", "running", "completed", "error"]),
    summary: z.string().max(LIMITS.toolSummary).optional(),
  }),
  /**
   * The engine asks the human (a tool call's permission, a question) and the turn waits; the
   * session reads `waiting_input` until the request is resolved.
   */
  "input.requested": z.strictObject({
    requestId: RequestIdSchema,
    kind: z.enum(["permission", "question"]),
    title: z.string().max(LIMITS.requestTitle),
    detail: z.string().max(LIMITS.requestDetail),
    options: z
      .array(z.strictObject({ label: z.string().min(1).max(LIMITS.requestTitle), description: z.string().max(LIMITS.requestTitle).optional() }))
      .max(LIMITS.requestOptions)
      .optional(),
  }),
  /** The request was answered (here or on the desktop itself) or withdrawn; the turn goes on. */
  "input.resolved": z.strictObject({ requestId: RequestIdSchema }),
  /**
   * What one step of the engine used, once per step (the gateway adds each to its session's
   * spend). Bounded per step, so no session's sums can overflow what the gateway stores.
   */
  usage: z.strictObject({
    inputTokens: z.int().min(0).max(LIMITS.stepTokens),
    outputTokens: z.int().min(0).max(LIMITS.stepTokens),
    costMicros: z.int().min(0).max(LIMITS.stepCostMicros).optional(),
  }),
  warning: ErrorDetailSchema,
  /** The end of this attempt, mirroring its completion; runRunner posts it itself. */
  terminal: z.strictObject({
    status: z.enum(["done", "failed", "cancelled"]),
    error: ErrorDetailSchema.optional(),
  }),
} as const;

export type TaskEventType = keyof typeof PAYLOADS;
export const TASK_EVENT_TYPES = Object.keys(PAYLOADS) as TaskEventType[];

const eventOf = <T extends TaskEventType>(type: T) =>
  z.strictObject({
    sequence: z.int().min(1).max(LIMITS.sequence),
    type: z.literal(type),
    payload: PAYLOADS[type],
    /** When the runner observed it (its clock); the gateway keeps its own receive time too. */
    at: TimestampSchema.optional(),
  });

/** One ordered event of an attempt. `sequence` starts at 1 and has no gaps. */
export const TaskEventSchema = z.discriminatedUnion("type", [
  eventOf("session.bound"),
  eventOf("assistant.delta"),
  eventOf("assistant.final"),
  eventOf("status"),
  eventOf("tool.call"),
  eventOf("input.requested"),
  eventOf("input.resolved"),
  eventOf("usage"),
  eventOf("warning"),
  eventOf("terminal"),
]);
export type TaskEvent = z.infer<typeof TaskEventSchema>;

/** An event as a handler emits it: the runner numbers it. */
export type TaskEventInput = TaskEvent extends infer E ? (E extends TaskEvent ? Omit<E, "sequence"> : never) : never;

/**
 * `POST tasks/:id/events`: a batch of consecutive events of one attempt. Replaying events the
 * gateway already holds, unchanged, is accepted; a gap or a changed replay is a 409.
 */
export const PostEventsRequestSchema = z
  .strictObject({
    attempt: AttemptSchema,
    events: z.array(TaskEventSchema).min(1).max(LIMITS.eventsPerPost),
  })
  .refine((body) => body.events.every((e, i) => i === 0 || e.sequence === body.events[i - 1]!.sequence + 1), {
    message: "events of one post must have consecutive sequence numbers",
    path: ["events"],
  });
export type PostEventsRequest = z.infer<typeof PostEventsRequestSchema>;

/** The answer to an events post: the sequence the gateway expects next. */
export const PostEventsResponseSchema = z.looseObject({
  taskId: GatewayIdSchema,
  attempt: AttemptSchema,
  nextSequence: z.int().min(1),
  /**
   * The gateway asks the attempt to stop, as a heartbeat's `cancelRequested` does (a stop, or a
   * budget these events reached): a runner stops at its next post instead of its next beat.
   * Absent from older gateways.
   */
  cancelRequested: z.boolean().optional(),
});
export type PostEventsResponse = z.infer<typeof PostEventsResponseSchema>;
