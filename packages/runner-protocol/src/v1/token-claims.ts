import { z } from "zod";
import { LIMITS } from "./limits.js";

// The claims of a runner token and what a runner may check without the key. Free of node:crypto
// and of anything the gateway alone needs: the runner's client entry is built from this file.

/** Runner tokens live 12 hours; the runner re-mints before then. */
export const RUNNER_TOKEN_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * OpenWork's runner capability vocabulary: the only strings a token's `c` may hold, each with
 * OpenWork's meaning wherever it appears (den-api refuses a token with any other string).
 */
export const OPENWORK_CAPABILITIES = [
  "model_attention_v1",
  "remote_session_v1",
  "remote_session_control_v1",
  "remote_session_only_v1",
  "remote_session_recovery_v1",
] as const;
export type OpenworkCapability = (typeof OPENWORK_CAPABILITIES)[number];

const identity = {
  /** Organization id. */
  o: z.string().min(1).max(LIMITS.id),
  /** Member id of the owner. */
  m: z.string().min(1).max(LIMITS.id),
  /** Runner id (the desktop's install id). */
  r: z.string().min(1).max(LIMITS.runnerId),
  /** Capabilities accepted at registration: OpenWork's vocabulary only, at most 5. */
  c: z.array(z.enum(OPENWORK_CAPABILITIES)).max(5),
  /** Expiry, epoch milliseconds. */
  e: z.int().positive(),
};

/**
 * The signed claims, with OpenWork's one-letter names: v2 (what is minted: with the audience `a`)
 * or the legacy v1 (no audience, `c` optional). Unknown members are ignored, as den-api does.
 */
export const RunnerTokenClaimsSchema = z.discriminatedUnion("v", [
  z.object({ v: z.literal(2), ...identity, a: z.string().min(1).max(LIMITS.audience).refine(isAudience, "not a usable base URL") }),
  z.object({ v: z.literal(1), ...identity, c: identity.c.default([]) }),
]);
export type RunnerTokenClaims = z.infer<typeof RunnerTokenClaimsSchema>;

/**
 * Reads a token's claims without the key. For the runner, which must check the audience
 * before it sends a token anywhere; it proves nothing about who minted the token.
 */
export function decodeRunnerToken(token: string): RunnerTokenClaims | null {
  const parts = splitToken(token);
  return parts ? parseClaims(parts.payload) : null;
}

/**
 * Whether the runner may send this token to `baseUrl`: the token's audience must be that URL,
 * over https, or over http to a loopback host only.
 */
export function mayPresentRunnerToken(token: string, baseUrl: string): boolean {
  const claims = decodeRunnerToken(token);
  if (!claims) return false;
  let audience: string;
  try {
    audience = normalizeAudience(baseUrl);
  } catch {
    return false;
  }
  if (claims.v !== 2 || claims.a !== audience) return false;
  const url = new URL(audience);
  return url.protocol === "https:" || isLoopback(url.hostname);
}

/**
 * The canonical form of a gateway base URL: origin plus path, no trailing slash, no query,
 * no fragment. Only http(s) and no credentials; anything else throws a TypeError.
 */
export function normalizeAudience(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`runner token audience is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("runner token audience must be an http(s) URL");
  }
  if (url.username || url.password) throw new TypeError("runner token audience must not carry credentials");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

export function splitToken(token: string): { payload: string; signature: string } | null {
  if (typeof token !== "string" || token.length > LIMITS.token) return null;
  const parts = token.split(".");
  if (parts.length !== 2) return null;
  const [payload, signature] = parts as [string, string];
  const segment = /^[A-Za-z0-9_-]+$/;
  return segment.test(payload) && segment.test(signature) ? { payload, signature } : null;
}

export function parseClaims(payload: string): RunnerTokenClaims | null {
  try {
    const parsed = RunnerTokenClaimsSchema.safeParse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function isAudience(value: string): boolean {
  try {
    normalizeAudience(value);
    return true;
  } catch {
    return false;
  }
}

export function sameAudience(configured: string, claimed: string): boolean {
  try {
    return normalizeAudience(configured) === normalizeAudience(claimed);
  } catch {
    return false;
  }
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}
