import { z } from "zod";
import { TimestampSchema } from "./common.js";

/**
 * The gateway's MCP entry for the engine running one session: the URL and that session's own
 * credential. An agent in the session that creates sessions through it is recorded as their
 * spawner. Handed over with the session's turns and refreshed through heartbeats; only a gateway
 * configured to issue session credentials sends one. The runner gives it to its engine and to
 * nothing else (never a log line).
 */
export const SessionMcpSchema = z.looseObject({
  url: z.string().min(1).max(2_000),
  /** The `Authorization` header value (`Bearer …`). */
  authorization: z.string().min(1).max(4_000),
  expiresAt: TimestampSchema,
});
export type SessionMcp = z.infer<typeof SessionMcpSchema>;
