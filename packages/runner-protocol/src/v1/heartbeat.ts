import { z } from "zod";
import { AttemptSchema, TimestampSchema } from "./common.js";
import { SessionMcpSchema } from "./session-mcp.js";

/**
 * `POST tasks/:id/heartbeat`: extend the lease of this attempt. `refreshMcp`: the turn's MCP
 * entry nears its expiry; the answer carries a fresh one (from a gateway that issues them).
 */
export const HeartbeatRequestSchema = z.strictObject({ attempt: AttemptSchema, refreshMcp: z.literal(true).optional() });
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
  /** A fresh MCP entry for the turn's engine, when the heartbeat asked for one and the lease holds. */
  mcp: SessionMcpSchema.optional(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponseSchema>;
