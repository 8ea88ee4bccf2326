import type { MemberScope } from "@openwork/remote-session-core";
import { bearerToken } from "@openwork/runner-protocol/server";
import type { McpAuth } from "@openwork/remote-session-host";
import { type DevMember, userIdOf } from "./dev-members.js";
import { sameSecret } from "./same-secret.js";

/**
 * The host's member callbacks over the dev members of the reference gateway: where den-api asks
 * its own directory and OAuth introspection, this asks the dev config. A member marked
 * `active: false` is den-api's `member: null`.
 */
export function devAuth(members: () => readonly DevMember[]) {
  const byToken = (kind: "mcpToken" | "sessionToken", token: string) => members().find((m) => sameSecret(token, m[kind]));
  const byScope = (scope: MemberScope) => members().find((m) => m.organizationId === scope.organizationId && m.memberId === scope.memberId);
  const sessionMember = (request: Request) => byToken("sessionToken", bearerToken(request.headers.get("authorization")));
  return {
    verifyMemberToken: async (token: string): Promise<McpAuth | null> => {
      const member = byToken("mcpToken", token);
      if (!member) return null;
      return {
        token,
        clientId: member.name,
        scopes: member.scopes,
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
        // No memberId for someone no longer an active member: den-api's `member: null`.
        extra: { organizationId: member.organizationId, userId: userIdOf(member), ...(member.active === false ? {} : { memberId: member.memberId }) },
      };
    },
    /** The member a session token (the desktop's sign-in) names. */
    authenticateMember: async (request: Request): Promise<MemberScope | null> => {
      const member = sessionMember(request);
      return member ? { organizationId: member.organizationId, memberId: member.memberId } : null;
    },
    isActiveMember: async (scope: MemberScope) => {
      const member = byScope(scope);
      return member !== undefined && member.active !== false;
    },
    scopesOf: async (scope: MemberScope) => byScope(scope)?.scopes ?? [],
    userOf: async (scope: MemberScope) => {
      const member = byScope(scope);
      return member ? userIdOf(member) : null;
    },
    memberOf: async (user: { organizationId: string; memberId: string }): Promise<MemberScope | null> => {
      const member = members().find((m) => m.organizationId === user.organizationId && userIdOf(m) === user.memberId && m.active !== false);
      return member ? { organizationId: member.organizationId, memberId: member.memberId } : null;
    },
  };
}
