import { expect, it } from "vitest";
import { devAuth } from "./dev-auth.js";
import { fixedDevMember } from "./dev-members.js";

const signIn = (token: string) => new Request("http://127.0.0.1/v1/desktop-runner/token", { headers: { authorization: `Bearer ${token}` } });

it("finds a member by the kind of token presented, among many, and sees the list change", async () => {
  let members = Array.from({ length: 2_000 }, (_, i) => fixedDevMember(`dev-auth-${i}`));
  const auth = devAuth(() => members);
  const last = members.at(-1)!;
  expect(await auth.authenticateMember(signIn(last.sessionToken))).toEqual({ organizationId: last.organizationId, memberId: last.memberId });
  // A session token is not an MCP token, nor the other way round.
  expect(await auth.authenticateMember(signIn(last.mcpToken))).toBeNull();
  expect(await auth.verifyMemberToken(last.sessionToken)).toBeNull();
  expect(await auth.verifyMemberToken(last.mcpToken)).toMatchObject({ clientId: last.name, extra: { memberId: last.memberId } });
  expect(await auth.isActiveMember(last)).toBe(true);
  expect(await auth.verifyMemberToken(`${last.mcpToken}x`)).toBeNull();
  // The config changed: the member left, another is inactive.
  members = [{ ...members[0]!, active: false }];
  expect(await auth.authenticateMember(signIn(last.sessionToken))).toBeNull();
  expect(await auth.isActiveMember(last)).toBe(false);
  expect(await auth.isActiveMember(members[0]!)).toBe(false);
  expect(await auth.verifyMemberToken(members[0]!.mcpToken)).toMatchObject({ extra: { organizationId: members[0]!.organizationId } });
  expect((await auth.verifyMemberToken(members[0]!.mcpToken))?.extra).not.toHaveProperty("memberId");
});
