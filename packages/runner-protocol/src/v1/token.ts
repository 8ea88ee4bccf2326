import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import {
  normalizeAudience,
  parseClaims,
  RUNNER_TOKEN_TTL_MS,
  type RunnerTokenClaims,
  RunnerTokenClaimsSchema,
  sameAudience,
  splitToken,
  type OpenworkCapability,
} from "./token-claims.js";

/**
 * The signing prefix of OpenWork's runner tokens. The MAC covers this prefix plus the payload
 * segment, so a token of ours verifies in den-api and the other way round (same secret).
 */
const SIGNING_PREFIX = "openwork-automation-runner-v1.";

/** Why a token was refused. */
export type RunnerTokenRejection = "malformed" | "bad_signature" | "expired" | "wrong_audience";

export type RunnerTokenVerification = { ok: true; claims: RunnerTokenClaims } | { ok: false; reason: RunnerTokenRejection };

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
export function verifyRunnerToken(token: string, options: { secret: RunnerTokenSecret; audiences?: readonly string[]; now?: number }): RunnerTokenVerification {
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

function sign(secret: RunnerTokenSecret, payload: string): string {
  const key = typeof secret === "string" ? Buffer.from(secret) : secret;
  if (key.length < 32) throw new TypeError("runner token secret must be at least 32 bytes");
  return createHmac("sha256", key)
    .update(SIGNING_PREFIX + payload)
    .digest("base64url");
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
