import { z } from "zod";
import { AttemptSchema, TimestampSchema } from "./common.js";

/** `POST tasks/:id/heartbeat`: extend the lease of this attempt. */
export const HeartbeatRequestSchema = z.strictObject({ attempt: AttemptSchema });
export type HeartbeatRequest = z.infer<typeof HeartbeatRequestSchema>;

/**
 * The answer to a heartbeat. `leaseValid: false` means the attempt is over (the lease lapsed,
 * or the task ended): the runner stops work and posts nothing more for it.
 */
export const HeartbeatResponseSchema = z.looseObject({
  attempt: AttemptSchema,
  leaseValid: z.boolean(),
  leaseExpiresAt: TimestampSchema.nullable(),
  cancelRequested: z.boolean(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponseSchema>;
