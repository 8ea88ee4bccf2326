import type { MemberScope } from "@openwork/remote-session-core";
import { bearerToken } from "@openwork/runner-protocol/server";
import type { McpAuth } from "@openwork/remote-session-host";
import { type DevMember, userIdOf } from "./dev-members.js";
import { secretDigest } from "./same-secret.js";

/** The dev members by token digest and by scope: what each request looks a member up by. */
interface MemberIndex {
  readonly list: readonly DevMember[];
  readonly byDigest: Record<"mcpToken" | "sessionToken", Map<string, DevMember>>;
  readonly byScope: Map<string, DevMember>;
}

const scopeKey = (scope: MemberScope) => `${scope.organizationId}\u0000${scope.memberId}`;

function indexMembers(list: readonly DevMember[]): MemberIndex {
  const byDigest = { mcpToken: new Map<string, DevMember>(), sessionToken: new Map<string, DevMember>() };
  const byScope = new Map<string, DevMember>();
  // The first of duplicates wins, as a search through the list would find it.
  for (const member of list) {
    for (const kind of ["mcpToken", "sessionToken"] as const) {
      const key = secretDigest(member[kind]);
      if (!byDigest[kind].has(key)) byDigest[kind].set(key, member);
    }
    if (!byScope.has(scopeKey(member))) byScope.set(scopeKey(member), member);
  }
  return { list, byDigest, byScope };
}

/**
 * The host's member callbacks over the dev members of the reference gateway: where den-api asks
 * its own directory and OAuth introspection, this asks the dev config. A member marked
 * `active: false` is den-api's `member: null`.
 */
export function devAuth(members: () => readonly DevMember[]) {
  // Rebuilt when the list changes: a token or scope is found in one lookup, whatever the number of
  // members (a sign-in of 1 900 members' desktops compared every token in turn).
  let index = indexMembers([]);
  const current = () => {
    const list = members();
    if (list !== index.list) index = indexMembers(list);
    return index;
  };
  // A token is found by its SHA-256 digest: the lookup's timing depends on the digest, never on how much of a token matched.
  const byToken = (kind: "mcpToken" | "sessionToken", token: string) => current().byDigest[kind].get(secretDigest(token));
  const byScope = (scope: MemberScope) => current().byScope.get(scopeKey(scope));
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
