import { z } from "zod";
import { LIMITS } from "./limits.js";

/** An id minted by the gateway (task, session, message): opaque, prefixed, bounded. */
export const GatewayIdSchema = z
  .string()
  .min(1)
  .max(LIMITS.id)
  .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '_' and '-'");

/** An id minted by the runner's local engine: bounded, otherwise opaque. */
export const LocalIdSchema = z.string().min(1).max(LIMITS.localId);

/** A permission or question request's id, as the engine minted it; the caller's answer names it. */
export const RequestIdSchema = z
  .string()
  .min(1)
  .max(LIMITS.requestId)
  .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '_' and '-'");

/** A point in time on the wire: ISO 8601 with an offset. */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** An attempt number: 1 for the first claim of a task, one more for each re-claim. */
export const AttemptSchema = z.int().min(1).max(1_000);

/** The model a session should use: the session model's one definition (strict; its reply form is loose). */
export { ModelSchema, type Model, ModelReplySchema } from "@openwork/remote-session-core/wire";

/** A machine-readable cause with a human message. */
export const ErrorDetailSchema = z.strictObject({
  code: z
    .string()
    .min(1)
    .max(LIMITS.errorCode)
    .regex(/^[a-z][a-z0-9_]*$/, "lowercase letters, digits and underscores"),
  message: z.string().max(LIMITS.errorMessage),
});
export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;
