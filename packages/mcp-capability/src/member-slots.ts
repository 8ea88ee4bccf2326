/**
 * What each member holds open in this process (reads with `waitMs`, a host's streams), at most
 * `perMember` each: past it the member is refused at once, before any database work, and a
 * flood costs that member only.
 */
export function createMemberSlots(perMember: number) {
  const counts = new Map<string, number>();
  return {
    /** Counts one more of `member`'s; returns how to count it out (once), or null past the limit. */
    enter(member: string): (() => void) | null {
      const count = counts.get(member) ?? 0;
      if (count >= perMember) return null;
      counts.set(member, count + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const remaining = (counts.get(member) ?? 1) - 1;
        if (remaining > 0) counts.set(member, remaining);
        else counts.delete(member);
      };
    },
    /** Held now, all members together. */
    count: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
  };
}

export type MemberSlots = ReturnType<typeof createMemberSlots>;
