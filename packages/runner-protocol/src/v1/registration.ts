import { z } from "zod";
import { CapabilityStringSchema } from "./capabilities.js";
import { TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";

export const PLATFORMS = ["darwin", "win32", "linux"] as const;

/**
 * `POST token`: a signed-in member registers this machine's runner and asks for a runner token.
 * Member-authenticated; the gateway never offers this route over MCP. Strict: an unknown field
 * is a 400, so a typo cannot silently drop a setting.
 */
export const TokenMintRequestSchema = z.strictObject({
  runnerId: z
    .string()
    .min(LIMITS.runnerIdMin)
    .max(LIMITS.runnerId)
    .regex(/^[A-Za-z0-9._:-]+$/, "letters, digits, '.', '_', ':' and '-'"),
  name: z.string().trim().min(1).max(LIMITS.runnerName),
  platform: z.enum(PLATFORMS),
  appVersion: z.string().min(1).max(LIMITS.appVersion),
  protocolVersion: z.int().min(1).max(1_000),
  capabilities: z.array(CapabilityStringSchema).max(LIMITS.capabilities).default([]),
});
export type TokenMintRequest = z.input<typeof TokenMintRequestSchema>;

/** The answer to `POST token`. Loose, like every reply the runner reads. */
export const TokenMintResponseSchema = z.looseObject({
  token: z.string().min(32).max(LIMITS.token),
  expiresAt: TimestampSchema,
  /** The base URL the token is bound to; the runner sends it nowhere else. */
  audience: z.string().max(LIMITS.audience),
  protocolVersion: z.int().min(1),
  /** The capabilities the gateway knows and signed in: a subset of those declared. */
  capabilities: z.array(z.string().max(LIMITS.capability)).max(LIMITS.capabilities),
  /** Path of the SSE wake stream, relative to the audience. */
  eventsPath: z.string().max(LIMITS.audience),
});
export type TokenMintResponse = z.infer<typeof TokenMintResponseSchema>;
