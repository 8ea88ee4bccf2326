/**
 * Reads with `waitMs` in progress in this process, per member. A waiting read holds a request
 * (and its connection) for up to 25 s, so a member past `perMember` of them is refused at once,
 * before any database work, and the flood costs that member only.
 */
export function createWaitingReads(perMember: number) {
  const counts = new Map<string, number>();
  return {
    /** Counts one more waiting read of `member`; returns how to count it out, or null past the limit. */
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
    /** Waiting reads in progress, all members together. */
    count: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
  };
}
