import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/**
 * The session credential's signing prefix. The MAC covers it with the payload, so a runner
 * token (signed under OpenWork's runner prefix) never verifies here, and a session credential
 * never verifies as a runner token, even when a host signs both with one secret.
 */
const SIGNING_PREFIX = "openwork-remote-session-mcp-v1.";
/** What every session credential starts with: a host tells one from its other MCP tokens by it. */
export const SESSION_CREDENTIAL_PREFIX = "owsc1.";

/** Default lifetime of a session credential: an engine asks its runner for a fresh one before then. */
export const SESSION_CREDENTIAL_TTL_MS = 15 * 60_000;
const MAX_TTL_MS = 24 * 60 * 60_000;

const id = z.string().min(1).max(160);
const ClaimsSchema = z.strictObject({
  /** Organization, user (the owner scope) and membership of the member the session belongs to. */
  o: id,
  u: id,
  m: id,
  /** The remote session whose engine holds the credential. */
  s: z.string().regex(/^rs_[0-9a-z]{26}$/),
  /** Its depth in its spawn tree when issued (the ledger's own depth is what the guards read). */
  d: z.int().min(0).max(64),
  /** The MCP resource it is for. */
  aud: z.string().min(1).max(2_000),
  /** Expiry, epoch ms. */
  exp: z.int().positive(),
  /** A nonce: two credentials issued in one millisecond differ. */
  n: z.string().length(16),
});

/** Who a verified session credential speaks for. */
export interface SessionCredentialClaims {
  organizationId: string;
  userId: string;
  memberId: string;
  /** The session whose engine made the call: the spawner of whatever it creates. */
  sessionId: string;
  depth: number;
  expiresAt: Date;
}

export type SessionCredentialRejection = "malformed" | "bad_signature" | "expired" | "wrong_audience";

export interface SessionCredentials {
  /** A credential for the engine running `sessionId`; hand it over only to the runner holding that session. */
  issue(input: Omit<SessionCredentialClaims, "expiresAt">): { token: string; expiresAt: Date };
  /** The claims of a credential this host issued for this audience, or why not. Never throws. */
  verify(token: string): { ok: true; claims: SessionCredentialClaims } | { ok: false; reason: SessionCredentialRejection };
  /** Whether `token` is shaped as a session credential (then `verify` decides; no other verifier should take it). */
  isSessionCredential(token: string): boolean;
}

export interface SessionCredentialOptions {
  /** At least 32 bytes. */
  secret: string | Uint8Array;
  /** The MCP resource URL the credential is for (the gateway's MCP endpoint). */
  audience: string;
  /** Default 15 minutes; at most 24 hours. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * Session-scoped MCP credentials: a host issues one for the engine running a remote session (the
 * desktop runner fetches it for the session it holds), and a create made with it records that
 * session as the new one's spawner. The spawner comes from the credential, never from arguments,
 * so a model cannot forge where it sits in a tree. HMAC-SHA256 over a signing prefix of its own.
 */
export function createSessionCredentials(options: SessionCredentialOptions): SessionCredentials {
  const secret = typeof options.secret === "string" ? Buffer.from(options.secret, "utf8") : Buffer.from(options.secret);
  if (secret.length < 32) throw new RangeError("a session credential secret must be at least 32 bytes");
  const ttlMs = options.ttlMs ?? SESSION_CREDENTIAL_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_TTL_MS) throw new RangeError(`ttlMs must be a whole number of ms in (0, ${MAX_TTL_MS}]`);
  const now = options.now ?? Date.now;
  const mac = (payload: string) => createHmac("sha256", secret).update(`${SIGNING_PREFIX}${payload}`).digest();

  return {
    issue: ({ organizationId, userId, memberId, sessionId, depth }) => {
      const exp = now() + ttlMs;
      const claims = { o: organizationId, u: userId, m: memberId, s: sessionId, d: depth, aud: options.audience, exp, n: randomBytes(8).toString("hex") };
      const payload = Buffer.from(JSON.stringify(ClaimsSchema.parse(claims))).toString("base64url");
      return { token: `${SESSION_CREDENTIAL_PREFIX}${payload}.${mac(payload).toString("base64url")}`, expiresAt: new Date(exp) };
    },
    verify: (token) => {
      const parts = token.startsWith(SESSION_CREDENTIAL_PREFIX) ? token.slice(SESSION_CREDENTIAL_PREFIX.length).split(".") : [];
      if (parts.length !== 2) return { ok: false, reason: "malformed" };
      const [payload, signature] = parts as [string, string];
      // Compared as the canonical text: base64url decoding forgives stray characters and trailing
      // bits, so many strings would decode to one MAC (and one credential would have many spellings).
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(payload).toString("base64url"));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad_signature" };
      const parsed = ClaimsSchema.safeParse(parseJson(Buffer.from(payload, "base64url").toString("utf8")));
      if (!parsed.success) return { ok: false, reason: "malformed" };
      const claims = parsed.data;
      if (claims.aud !== options.audience) return { ok: false, reason: "wrong_audience" };
      if (claims.exp <= now()) return { ok: false, reason: "expired" };
      return {
        ok: true,
        claims: { organizationId: claims.o, userId: claims.u, memberId: claims.m, sessionId: claims.s, depth: claims.d, expiresAt: new Date(claims.exp) },
      };
    },
    isSessionCredential: (token) => token.startsWith(SESSION_CREDENTIAL_PREFIX),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
