/**
 * A verified MCP bearer token, in the AuthInfo shape both MCP SDK generations share: what a host's
 * MCP endpoint hands the capability, and what a session credential verifies to.
 */
export interface McpAuth {
  token: string;
  clientId: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt?: number;
  /**
   * `organizationId`, `userId` and `memberId` (the membership id; absent when not an active
   * member), and `remoteSessionId` for a session credential.
   */
  extra?: Record<string, unknown>;
}
