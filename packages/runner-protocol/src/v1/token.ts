import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { LIMITS } from "./limits.js";

/**
 * The signing prefix of OpenWork's runner tokens. The MAC covers this prefix plus the payload
 * segment, so a token of ours verifies in den-api and the other way round (same secret).
 */
const SIGNING_PREFIX = "openwork-automation-runner-v1.";

/** Runner tokens live 12 hours; the runner re-mints before then. */
export const RUNNER_TOKEN_TTL_MS = 12 * 60 * 60 * 1000;

/** The signed claims, with OpenWork's one-letter names. */
export const RunnerTokenClaimsSchema = z.strictObject({
  /** Claims version; 2 carries audience and capabilities. */
  v: z.literal(2),
  /** Organization id. */
  o: z.string().min(1).max(LIMITS.id),
  /** Member id of the owner. */
  m: z.string().min(1).max(LIMITS.id),
  /** Runner id. */
  r: z.string().min(LIMITS.runnerIdMin).max(LIMITS.runnerId),
  /** Granted capabilities. */
  c: z.array(z.string().max(LIMITS.capability)).max(LIMITS.capabilities),
  /** Audience: the gateway base URL the token was minted for. */
  a: z.string().min(1).max(LIMITS.audience),
  /** Expiry, epoch milliseconds. */
  e: z.int().positive(),
});
export type RunnerTokenClaims = z.infer<typeof RunnerTokenClaimsSchema>;

/** Why a token was refused. */
export type RunnerTokenRejection = "malformed" | "bad_signature" | "expired" | "wrong_audience";

export type RunnerTokenVerification =
  | { ok: true; claims: RunnerTokenClaims }
  | { ok: false; reason: RunnerTokenRejection };

/** A signing secret: at least 32 bytes. */
export type RunnerTokenSecret = string | Uint8Array;

export interface MintRunnerTokenInput {
  secret: RunnerTokenSecret;
  organizationId: string;
  memberId: string;
  runnerId: string;
  capabilities: readonly string[];
  /** The gateway base URL; normalized with {@link normalizeAudience}. */
  audience: string;
  now?: number;
  ttlMs?: number;
}

/** Mints a runner token. Throws a TypeError for a short secret or an unusable audience. */
export function mintRunnerToken(input: MintRunnerTokenInput): { token: string; claims: RunnerTokenClaims } {
  const claims = RunnerTokenClaimsSchema.parse({
    v: 2,
    o: input.organizationId,
    m: input.memberId,
    r: input.runnerId,
    c: [...input.capabilities],
    a: normalizeAudience(input.audience),
    e: (input.now ?? Date.now()) + (input.ttlMs ?? RUNNER_TOKEN_TTL_MS),
  });
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return { token: `${payload}.${sign(input.secret, payload)}`, claims };
}

/**
 * Verifies a runner token: signature first (constant time), then claims, expiry and audience.
 * Never throws for a bad token; each refusal has its own reason.
 */
export function verifyRunnerToken(
  token: string,
  options: { secret: RunnerTokenSecret; audience: string; now?: number },
): RunnerTokenVerification {
  const parts = splitToken(token);
  if (!parts) return { ok: false, reason: "malformed" };
  const expected = Buffer.from(sign(options.secret, parts.payload), "base64url");
  const given = Buffer.from(parts.signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: "bad_signature" };
  }
  const claims = parseClaims(parts.payload);
  if (!claims) return { ok: false, reason: "malformed" };
  if (claims.e <= (options.now ?? Date.now())) return { ok: false, reason: "expired" };
  if (claims.a !== normalizeAudience(options.audience)) return { ok: false, reason: "wrong_audience" };
  return { ok: true, claims };
}

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
  if (claims.a !== audience) return false;
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

function sign(secret: RunnerTokenSecret, payload: string): string {
  const key = typeof secret === "string" ? Buffer.from(secret) : secret;
  if (key.length < 32) throw new TypeError("runner token secret must be at least 32 bytes");
  return createHmac("sha256", key).update(SIGNING_PREFIX + payload).digest("base64url");
}

function splitToken(token: string): { payload: string; signature: string } | null {
  if (typeof token !== "string" || token.length > LIMITS.token) return null;
  const parts = token.split(".");
  if (parts.length !== 2) return null;
  const [payload, signature] = parts as [string, string];
  const segment = /^[A-Za-z0-9_-]+$/;
  return segment.test(payload) && segment.test(signature) ? { payload, signature } : null;
}

function parseClaims(payload: string): RunnerTokenClaims | null {
  try {
    const parsed = RunnerTokenClaimsSchema.safeParse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}
