/**
 * Who is calling, from the verified auth context only — never from arguments. den-api builds it
 * from its principal; the McpServer adapter from the transport's AuthInfo.
 */
export interface CapabilityContext {
  organizationId: string;
  /** Null when the caller is not an active member of the organization. */
  memberId: string | null;
  scopes: readonly string[];
}

/** Scopes the source checks. Both are configurable: den-api may use its own names. */
export interface RemoteSessionPolicy {
  /** Gates the whole source: without it search shows nothing and execute refuses. Default `remote-session`. */
  scope: string;
  /** Needed for create, send and stop. Default `mcp:write`. */
  writeScope: string;
}

export const DEFAULT_POLICY: RemoteSessionPolicy = { scope: "remote-session", writeScope: "mcp:write" };
