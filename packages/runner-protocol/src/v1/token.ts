import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { LIMITS } from "./limits.js";

/**
 * The signing prefix of OpenWork's runner tokens. The MAC covers this prefix plus the payload
 * segment, so a token of ours verifies in den-api and the other way round (same secret).
 */
const SIGNING_PREFIX = "openwork-automation-runner-v1.";

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
  /** OpenWork capabilities granted (order and duplicates kept, as den-api signs them). */
  capabilities: readonly OpenworkCapability[];
  /** The base URL the runner must use; normalized with {@link normalizeAudience}. */
  audience: string;
  now?: number;
  ttlMs?: number;
}

/**
 * Mints a v2 runner token, byte-compatible with den-api's (claims in the order `v,o,m,r,c,a,e`).
 * Throws a TypeError for a short secret or an unusable audience.
 */
export function mintRunnerToken(input: MintRunnerTokenInput): { token: string; claims: Extract<RunnerTokenClaims, { v: 2 }> } {
  const claims = {
    v: 2 as const,
    o: input.organizationId,
    m: input.memberId,
    r: input.runnerId,
    c: [...input.capabilities],
    a: normalizeAudience(input.audience),
    e: (input.now ?? Date.now()) + (input.ttlMs ?? RUNNER_TOKEN_TTL_MS),
  };
  RunnerTokenClaimsSchema.parse(claims);
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return { token: `${payload}.${sign(input.secret, payload)}`, claims };
}

/**
 * Verifies a runner token as den-api does: the signature compared as the canonical base64url
 * string in constant time (another spelling of the same bytes is refused), then the claims (v1 or
 * v2) and expiry. With `audiences`, a v2 token must name one of them and a v1 token (which names
 * none) is refused; without, the audience is not checked (OpenWork's rule). Never throws for a
 * bad token; each refusal has its own reason.
 */
export function verifyRunnerToken(
  token: string,
  options: { secret: RunnerTokenSecret; audiences?: readonly string[]; now?: number },
): RunnerTokenVerification {
  const parts = splitToken(token);
  if (!parts) return { ok: false, reason: "malformed" };
  // Digests of equal length: no length check to leak, and no byte of the given string can throw.
  if (!timingSafeEqual(digest(parts.signature), digest(sign(options.secret, parts.payload)))) {
    return { ok: false, reason: "bad_signature" };
  }
  const claims = parseClaims(parts.payload);
  if (!claims) return { ok: false, reason: "malformed" };
  if (!Number.isSafeInteger(claims.e) || claims.e <= (options.now ?? Date.now())) return { ok: false, reason: "expired" };
  if (options.audiences && !(claims.v === 2 && options.audiences.some((a) => sameAudience(a, claims.a)))) {
    return { ok: false, reason: "wrong_audience" };
  }
  return { ok: true, claims };
}

/**
 * The token of an `Authorization` header: `Bearer` in any case, then any whitespace, trimmed.
 * An empty string when there is none.
 */
export function bearerToken(header: string | null | undefined): string {
  const match = /^Bearer\s+(.+)$/i.exec((header ?? "").trim());
  return match ? match[1]!.trim() : "";
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

function sign(secret: RunnerTokenSecret, payload: string): string {
  const key = typeof secret === "string" ? Buffer.from(secret) : secret;
  if (key.length < 32) throw new TypeError("runner token secret must be at least 32 bytes");
  return createHmac("sha256", key).update(SIGNING_PREFIX + payload).digest("base64url");
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
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

function isAudience(value: string): boolean {
  try {
    normalizeAudience(value);
    return true;
  } catch {
    return false;
  }
}

function sameAudience(configured: string, claimed: string): boolean {
  try {
    return normalizeAudience(configured) === normalizeAudience(claimed);
  } catch {
    return false;
  }
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}
