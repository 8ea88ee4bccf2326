import { z } from "zod";
import { AttemptSchema, ErrorDetailSchema, GatewayIdSchema, LocalIdSchema } from "./common.js";
import { LIMITS } from "./limits.js";

/** The attempt finished its work. */
export const DoneResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("done"),
  localSessionId: LocalIdSchema,
  workspaceId: LocalIdSchema.optional(),
  summary: z.string().max(LIMITS.summary).optional(),
});

/** The attempt could not do its work; `error.code` says why (`model_access_lost`, …). */
export const FailedResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("failed"),
  error: ErrorDetailSchema,
  localSessionId: LocalIdSchema.optional(),
});

/** The attempt stopped because the gateway asked it to (`cancelRequested`). */
export const CancelledResultSchema = z.strictObject({
  attempt: AttemptSchema,
  status: z.literal("cancelled"),
  localSessionId: LocalIdSchema.optional(),
  reason: z.string().max(LIMITS.reason).optional(),
});

/**
 * `POST tasks/:id/complete`. Each branch is strict, so one branch's fields are refused on
 * another. Completion is immutable: the same body again is accepted, a different one is a 409.
 */
export const CompleteRequestSchema = z.discriminatedUnion("status", [
  DoneResultSchema,
  FailedResultSchema,
  CancelledResultSchema,
]);
export type CompleteRequest = z.infer<typeof CompleteRequestSchema>;

/** A completion without its attempt: what a handler returns. */
export type TaskResult = CompleteRequest extends infer R
  ? R extends CompleteRequest
    ? Omit<R, "attempt">
    : never
  : never;

export const CompleteResponseSchema = z.looseObject({
  taskId: GatewayIdSchema,
  state: z.string().max(40),
});
export type CompleteResponse = z.infer<typeof CompleteResponseSchema>;
