import type { MemberScope } from "@openwork/remote-session-core";

/**
 * The open streams' membership re-check, asked once per member per interval whatever the number
 * of its desktops streaming here: a member's streams share the answer the first of them got
 * within `ttlMs` (a host whose `isActiveMember` reads its database pays a statement per member,
 * not per desktop). A failed check is not kept.
 */
export function createStreamMembership(options: { isActiveMember(scope: MemberScope): Promise<boolean>; ttlMs: number; now?: () => number }) {
  const now = options.now ?? (() => performance.now());
  const checked = new Map<string, { at: number; active: Promise<boolean> }>();
  let prunedAt = now();
  const prune = (at: number) => {
    if (at - prunedAt < options.ttlMs) return;
    prunedAt = at;
    for (const [key, entry] of checked) if (at - entry.at >= options.ttlMs) checked.delete(key);
  };
  return {
    /** Whether the member is still active, as asked at most `ttlMs` ago. */
    isActive(scope: MemberScope): Promise<boolean> {
      const at = now();
      prune(at);
      const key = `${scope.organizationId}\u0000${scope.memberId}`;
      const entry = checked.get(key);
      if (entry && at - entry.at < options.ttlMs) return entry.active;
      const active = options.isActiveMember({ organizationId: scope.organizationId, memberId: scope.memberId });
      checked.set(key, { at, active });
      active.catch(() => checked.get(key)?.active === active && checked.delete(key));
      return active;
    },
  };
}

export type StreamMembership = ReturnType<typeof createStreamMembership>;
