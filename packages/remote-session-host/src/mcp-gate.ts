import { createMemberSlots } from "@openwork/mcp-capability/internal";
import { BODY_TOO_LARGE_HEADERS, BodyTooLarge, MCP_BODY_BYTES, withBodyWithin } from "@openwork/remote-session-core/internal";
import type { McpGate } from "./host-options.js";
import type { McpAuth } from "./mcp-auth.js";
import { mcpMemberKey, rateLimited, whenBodyEnds } from "./member-gate.js";
import type { MemberLimits } from "./member-limits.js";
import type { SessionCredentialAuth } from "./session-credential-auth.js";

/**
 * The gate in front of a host's MCP endpoint: at most `mcpRequestsInFlight` requests of one
 * member are answered at once (a flood is refused for the cost of a 429, before any MCP server is
 * built for it; a slot is held until the answer's body ends), and a body is read no further than
 * its limit (the SDK's transports read it whole).
 */
export function createMcpGate(limits: Pick<MemberLimits, "mcpRequestsInFlight">, refused: () => void = () => {}): McpGate {
  const inFlight = createMemberSlots(limits.mcpRequestsInFlight);
  return async (request, auth, serve) => {
    const release = inFlight.enter(mcpMemberKey(auth));
    if (!release) {
      refused();
      return rateLimited(`at most ${limits.mcpRequestsInFlight} MCP requests of one member are answered at once; retry after retryAfterMs`, 1_000);
    }
    request.signal.addEventListener("abort", release, { once: true });
    try {
      return whenBodyEnds(await serve(await withBodyWithin(request, MCP_BODY_BYTES)), release);
    } catch (error) {
      release();
      if (error instanceof BodyTooLarge)
        return Response.json({ error: error.code, message: error.message, retryable: false }, { status: 413, headers: BODY_TOO_LARGE_HEADERS });
      throw error;
    }
  };
}

/**
 * The MCP auth hook: a token shaped as a session credential is decided by the credentials alone
 * (a forged one never falls through to the host's verifier); any other by `verifyMemberToken`.
 */
export function verifyMcpTokenWith(
  credentials: SessionCredentialAuth | null,
  verifyMemberToken: ((token: string) => Promise<McpAuth | null>) | undefined,
): (token: string) => Promise<McpAuth | null> {
  return async (token) => {
    if (credentials?.owns(token)) return credentials.verify(token);
    return verifyMemberToken ? verifyMemberToken(token) : null;
  };
}
