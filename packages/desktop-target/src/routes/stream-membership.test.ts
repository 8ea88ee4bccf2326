import { silentLogger } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import { createStreamMembership } from "./stream-membership.js";

it("asks each member once per check for all its streams, ends a removed member's streams, and leaves them open when the check fails", async () => {
  const asked: string[] = [];
  const removed = new Set<string>();
  let failing = false;
  const membership = createStreamMembership({
    isActiveMember: async (scope) => {
      asked.push(scope.memberId);
      if (failing) throw new Error("directory down");
      return !removed.has(scope.memberId);
    },
    intervalMs: 60_000,
    logger: silentLogger,
  });
  const alice = { organizationId: "org_a", memberId: "mem_alice" };
  const bob = { organizationId: "org_a", memberId: "mem_bob" };
  const ended: string[] = [];
  // Ten desktops of each member stream here.
  const unwatch = Array.from({ length: 10 }, (_, i) => [
    membership.watch(alice, () => ended.push(`alice-${i}`)),
    membership.watch(bob, () => ended.push(`bob-${i}`)),
  ]).flat();
  expect(membership.stats()).toEqual({ members: 2, streams: 20 });
  await membership.check();
  expect(asked.sort()).toEqual(["mem_alice", "mem_bob"]);
  expect(ended).toEqual([]);
  removed.add("mem_bob");
  failing = true;
  await membership.check();
  expect(ended).toEqual([]);
  failing = false;
  await membership.check();
  expect(ended.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `bob-${i}`).sort());
  for (const stop of unwatch) stop();
  expect(membership.stats()).toEqual({ members: 0, streams: 0 });
});
