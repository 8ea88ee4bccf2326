/**
 * Moves of a session made in this process (a send, an answer, a stop, a recorded state), for
 * reads that wait: one wakes as soon as its session moves here instead of at its next look.
 * Moves made elsewhere (another replica, the desktop, the web chat) are seen at that next look.
 */
export interface SessionChanges {
  /** Resolves when `sessionId` moves here, after `timeoutMs`, or on abort, whichever is first. */
  wait(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  moved(sessionId: string): void;
}

export function createSessionChanges(): SessionChanges {
  const waiters = new Map<string, Set<() => void>>();
  return {
    wait: (sessionId, timeoutMs, signal) =>
      new Promise<void>((resolve) => {
        const set = waiters.get(sessionId) ?? new Set();
        const wake = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", wake);
          set.delete(wake);
          if (set.size === 0) waiters.delete(sessionId);
          resolve();
        };
        const timer = setTimeout(wake, timeoutMs);
        signal?.addEventListener("abort", wake, { once: true });
        set.add(wake);
        waiters.set(sessionId, set);
      }),
    moved: (sessionId) => {
      for (const wake of [...(waiters.get(sessionId) ?? [])]) wake();
    },
  };
}
