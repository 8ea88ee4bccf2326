import type { WakeBus } from "@openwork/desktop-target";

/**
 * Wakes the notification drain when a session changed anywhere: every committed session change
 * (a desktop move, the sweeper's, another target's through the capability) sends a session hint
 * on the wake bus to every replica, and the state-change trigger enqueued its notification in
 * that same transaction. So the drain looks at once instead of at its next interval. At most one
 * wake per `minGapMs` (a busy replica's hints would otherwise cost a pass each; 25 ms: at most 40
 * passes a second, two cheap statements each); one that comes sooner is deferred to the end of the
 * gap, never dropped. The interval stays the backstop (a
 * lost hint, a change made outside the gateway).
 */
export function createDrainWake(minGapMs = 25) {
  const listeners = new Set<() => void>();
  let lastAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    timer = undefined;
    lastAt = Date.now();
    for (const listener of listeners) listener();
  };
  const hinted = () => {
    if (timer) return;
    const wait = lastAt + minGapMs - Date.now();
    if (wait <= 0) fire();
    else timer = setTimeout(fire, wait);
  };
  return {
    /** `bus` with its session hints (and resyncs: hints may have been lost) also waking the drain. */
    observe: (bus: WakeBus): WakeBus => ({
      ...bus,
      subscribe: (handlers) =>
        bus.subscribe({
          ...handlers,
          sessions: (ids) => {
            handlers.sessions(ids);
            hinted();
          },
          resync: () => {
            handlers.resync();
            hinted();
          },
        }),
    }),
    /** The drain's `wake` option. */
    wake: (drainNow: () => void) => {
      listeners.add(drainNow);
      return () => {
        listeners.delete(drainNow);
        if (listeners.size === 0) clearTimeout(timer);
      };
    },
  };
}

export type DrainWake = ReturnType<typeof createDrainWake>;
