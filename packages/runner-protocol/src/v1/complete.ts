import { z } from "zod";
import { AttemptSchema, ErrorDetailSchema, GatewayIdSchema, LocalIdSchema } from "./common.js";
import { LIMITS } from "./limits.js";
import { TaskEventSchema } from "./task-events.js";
import { ClaimKindsSchema } from "./work-kinds.js";
import { AssignmentSchema } from "./assignment.js";

/**
 * Protocol 3: the attempt's last events, appended in the completion's transaction (one request
 * and one write instead of two). Consecutive, after those already posted; the same rules as
 * `POST tasks/:id/events`.
 */
const trailingEvents = {
  events: z
    .array(TaskEventSchema)
    .min(1)
    .max(LIMITS.eventsPerPost)
    .refine((events) => events.every((e, i) => i === 0 || e.sequence === events[i - 1]!.sequence + 1), "events must have consecutive sequence numbers")
    .optional(),
  /**
   * Protocol 3: claim the runner's next task in the same request (as `claim-next` with these
   * kinds); the answer carries it as `next`. A replayed completion answers the same task again.
   * Only remote-session kinds are claimed this way; a host's kind named here finds nothing.
   */
  next: z.strictObject({ kinds: ClaimKindsSchema.optional() }).optional(),
};

/** The attempt finished its work. */
export const DoneResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("done"),
  localSessionId: LocalIdSchema,
  workspaceId: LocalIdSchema.optional(),
  summary: z.string().max(LIMITS.summary).optional(),
  ...trailingEvents,
});

/** The attempt could not do its work; `error.code` says why (`model_access_lost`, …). */
export const FailedResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("failed"),
  error: ErrorDetailSchema,
  localSessionId: LocalIdSchema.optional(),
  ...trailingEvents,
});

/** The attempt stopped because the gateway asked it to (`cancelRequested`). */
export const CancelledResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("cancelled"),
  localSessionId: LocalIdSchema.optional(),
  reason: z.string().max(LIMITS.reason).optional(),
  ...trailingEvents,
});

/**
 * `POST tasks/:id/complete`. Each branch is strict, so one branch's fields are refused on
 * another. Completion is immutable: the same body again is accepted, a different one is a 409.
 */
export const CompleteRequestSchema = z.discriminatedUnion("status", [DoneResultSchema, FailedResultSchema, CancelledResultSchema]);
export type CompleteRequest = z.infer<typeof CompleteRequestSchema>;

/** A completion without its attempt, events or next claim: what a handler returns. */
export type TaskResult = CompleteRequest extends infer R ? (R extends CompleteRequest ? Omit<R, "attempt" | "events" | "next"> : never) : never;

/**
 * `POST tasks/:id/complete` of a kind the host registered (protocol 4): the attempt ends done with
 * the kind's own `result` fields, failed, or cancelled, with the same trailing events and next
 * claim as a remote-session task. The host reads `result` with its own schema.
 */
export const WorkCompleteRequestSchema = z.discriminatedUnion("status", [
  z.strictObject({ attempt: AttemptSchema, status: z.literal("done"), result: z.record(z.string(), z.unknown()).optional(), ...trailingEvents }),
  z.strictObject({ attempt: AttemptSchema, status: z.literal("failed"), error: ErrorDetailSchema, ...trailingEvents }),
  z.strictObject({ attempt: AttemptSchema, status: z.literal("cancelled"), reason: z.string().max(LIMITS.reason).optional(), ...trailingEvents }),
]);
export type WorkCompleteRequest = z.infer<typeof WorkCompleteRequestSchema>;

/** What a handler of a host's kind returns: its completion without the attempt, events or next claim. */
export type WorkResult = WorkCompleteRequest extends infer R ? (R extends WorkCompleteRequest ? Omit<R, "attempt" | "events" | "next"> : never) : never;

/** Either completion, as the runner sends it; the gateway reads it by the task's kind. */
export const AnyCompleteRequestSchema = z.union([CompleteRequestSchema, WorkCompleteRequestSchema]);

export const CompleteResponseSchema = z.looseObject({
  taskId: GatewayIdSchema,
  state: z.string().max(40),
  /**
   * The task claimed for the runner when the completion asked for one (`next`); null when none
   * waits. Always a remote-session task: a replayed completion hands the same one back, which the
   * gateway cannot promise for a host's kind (their tasks are claimed with `claim-next`).
   */
  next: AssignmentSchema.nullable().optional(),
});
export type CompleteResponse = z.infer<typeof CompleteResponseSchema>;
