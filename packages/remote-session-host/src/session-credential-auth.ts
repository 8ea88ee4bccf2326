import { hkdfSync } from "node:crypto";
import { createSessionCredentials } from "@openwork/mcp-capability";
import type { SessionCredentialClaims } from "@openwork/mcp-capability/internal";
import type { MemberScope } from "@openwork/remote-session-core";
import type { McpAuth } from "./mcp-auth.js";

/** The most a session credential may carry: the remote-session tools' own scopes. */
const SESSION_SCOPES = ["mcp:read", "mcp:write"];

/** What an engine's MCP entry needs: the gateway's MCP URL and the session's own bearer credential. */
export interface SessionMcpEntry {
  url: string;
  authorization: string;
  expiresAt: Date;
}

export interface SessionCredentialAuthOptions {
  /** The gateway's runner-token secret: the credentials' key is derived from it under a label of their own. */
  secret: string;
  /** The MCP endpoint's URL (the credentials' audience). */
  mcpUrl: string;
  /** Whether the member is still an active member; a credential of one who is not acts as den-api's `member: null`. */
  isActive: (scope: MemberScope) => Promise<boolean>;
  /** The MCP scopes the member holds now: a session credential never carries more (a read-only member's engine only reads). */
  scopesOf: (scope: MemberScope) => Promise<readonly string[]>;
  ttlMs?: number;
}

/**
 * Session credentials on the reference gateway: issued for the engine of a session a runner
 * holds, and verified on the MCP endpoint before the member tokens are looked at. A token shaped
 * as a session credential is decided here only, so a forged one never falls through to another
 * verifier.
 */
export function createSessionCredentialAuth(options: SessionCredentialAuthOptions) {
  // Its own key: a leaked session credential key would not sign runner tokens, nor the reverse.
  const key = Buffer.from(hkdfSync("sha256", options.secret, "", "openwork remote-session mcp credential v1", 32));
  const credentials = createSessionCredentials({ secret: key, audience: options.mcpUrl, ...(options.ttlMs ? { ttlMs: options.ttlMs } : {}) });

  const authOf = async (token: string, claims: SessionCredentialClaims): Promise<McpAuth> => {
    const member = { organizationId: claims.organizationId, memberId: claims.memberId };
    const [active, held] = await Promise.all([options.isActive(member), options.scopesOf(member)]);
    return {
      token,
      clientId: `remote-session:${claims.sessionId}`,
      scopes: SESSION_SCOPES.filter((scope) => held.includes(scope)),
      expiresAt: Math.floor(claims.expiresAt.getTime() / 1000),
      extra: {
        organizationId: claims.organizationId,
        userId: claims.userId,
        remoteSessionId: claims.sessionId,
        ...(active ? { memberId: claims.memberId } : {}),
      },
    };
  };

  return {
    /** The MCP entry for the engine running `session`. */
    issue(session: Omit<SessionCredentialClaims, "expiresAt">): SessionMcpEntry {
      const { token, expiresAt } = credentials.issue(session);
      return { url: options.mcpUrl, authorization: `Bearer ${token}`, expiresAt };
    },
    /** Whether `token` is shaped as a session credential: then `verify` alone decides. */
    owns: (token: string) => credentials.isSessionCredential(token),
    /** The auth of a valid session credential; null for anything else (check `owns` before asking another verifier). */
    async verify(token: string): Promise<McpAuth | null> {
      if (!credentials.isSessionCredential(token)) return null;
      const verified = credentials.verify(token);
      return verified.ok ? authOf(token, verified.claims) : null;
    },
  };
}

export type SessionCredentialAuth = ReturnType<typeof createSessionCredentialAuth>;

/** The entry as the runner channel carries it (an ISO expiry). */
export const toSessionMcp = (entry: SessionMcpEntry) => ({ url: entry.url, authorization: entry.authorization, expiresAt: entry.expiresAt.toISOString() });
