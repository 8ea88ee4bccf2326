/** Exponential backoff with jitter. */
export interface Backoff {
  /** Delay of the first retry, before jitter. Default 500 ms. */
  baseMs: number;
  /** Largest delay. Default 30 s. */
  maxMs: number;
  /** Source of jitter in [0, 1). Default Math.random. */
  random: () => number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 500, maxMs: 30_000, random: Math.random };

/**
 * The delay before retry number `retry` (0 for the first): base·2^retry, capped, times a jitter
 * factor in [0.5, 1.5) so that runners cut off together do not come back together.
 */
export function backoffDelay(retry: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  const exponential = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(retry, 30));
  return Math.min(backoff.maxMs, Math.round(exponential * (0.5 + backoff.random())));
}
