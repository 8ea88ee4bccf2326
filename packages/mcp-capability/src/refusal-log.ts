/** How often one member's repeated refusal of one kind is logged: once per window, with how many were not. */
export const REFUSAL_LOG_WINDOW_MS = 60_000;

// Keys kept before the ones whose window has passed are swept: a bound on memory, not a limit on members.
const SWEEP_ABOVE = 10_000;

/**
 * Samples the log lines of refusals a member can repeat in a loop (a full waiting-read gate, a
 * rate limit): the first refusal of a kind is logged, the rest of its window are counted, and
 * the next one logged after it says how many were left out. A member's retry loop writes a line
 * a minute, not one per request.
 */
export class RefusalLog {
  private readonly windows = new Map<string, { since: number; left: number }>();

  constructor(
    private readonly windowMs = REFUSAL_LOG_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether to log this refusal now; null to leave it out, else how many were left out before it. */
  take(key: string): { leftOut: number } | null {
    const now = this.now();
    const window = this.windows.get(key);
    if (window && now - window.since < this.windowMs) {
      window.left += 1;
      return null;
    }
    if (this.windows.size >= SWEEP_ABOVE) this.sweep(now);
    this.windows.set(key, { since: now, left: 0 });
    return { leftOut: window?.left ?? 0 };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.since >= this.windowMs) this.windows.delete(key);
  }
}
