import { expect, it } from "vitest";
import { createStreamMembership } from "./stream-membership.js";

it("asks once per member per interval for all its streams, again after it, and does not keep a failed check", async () => {
  let clock = 0;
  const asked: string[] = [];
  let failing = false;
  const membership = createStreamMembership({
    isActiveMember: async (scope) => {
      asked.push(scope.memberId);
      if (failing) throw new Error("directory down");
      return scope.memberId !== "mem_gone";
    },
    ttlMs: 15_000,
    now: () => clock,
  });
  const alice = { organizationId: "org_a", memberId: "mem_alice" };
  const gone = { organizationId: "org_a", memberId: "mem_gone" };
  // Ten desktops of each member check within one interval.
  const answers = await Promise.all(Array.from({ length: 10 }, () => [membership.isActive(alice), membership.isActive(gone)]).flat());
  expect(answers.filter(Boolean)).toHaveLength(10);
  expect(asked).toEqual(["mem_alice", "mem_gone"]);
  clock = 15_000;
  failing = true;
  await expect(membership.isActive(alice)).rejects.toThrow(/directory down/);
  failing = false;
  // The failure was not kept: the next stream asks again.
  expect(await membership.isActive(alice)).toBe(true);
  expect(asked).toEqual(["mem_alice", "mem_gone", "mem_alice", "mem_alice"]);
});
