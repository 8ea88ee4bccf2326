import { getHeapStatistics } from "node:v8";
import type { Rate } from "./member-limits.js";

/**
 * What one gateway process holds and starts for every member together. Wake streams have a
 * budget of their own, apart from requests: desktops connected can never take the room an agent's
 * MCP call or a runner's claim needs.
 */
export interface ProcessLimits {
  /**
   * Runner wake streams held at once. Past it a new stream is answered 503 `server_busy` with a
   * `retryAfterMs` of 30–90 s (spread at random); its desktop is still served meanwhile, by the
   * backstop polls its runner makes while its stream is down. Default: sized by the heap,
   * `runnerStreamsForHeap()`; a Node host passes what the process's file limit allows
   * too (`sizeConnectionLimits().maxStreams`, from `./node`).
   */
  runnerStreams: number;
  /**
   * Wake-stream opens started a second. Past it an open is answered 503 `server_busy` with a
   * `retryAfterMs` that queues the refused ones one per 1/`perSecond` (each with up to a slot of
   * jitter): a fleet reconnecting at once (a replica restarted, or died and its desktops moved
   * here) comes back spread at the rate the process can open, instead of all retrying together.
   * Default a burst of 400, then 200 a second.
   */
  runnerStreamOpens: Rate;
}

/** The heap a held stream takes, with room: what `runnerStreamsForHeap` divides half the heap by. */
const STREAM_HEAP_BYTES = 32 * 1024;

/** The streams half of this process's heap limit holds, at 32 KiB a stream (twice the measured cost). */
export function runnerStreamsForHeap(heapLimitBytes: number = getHeapStatistics().heap_size_limit): number {
  return Math.max(1, Math.floor(heapLimitBytes / 2 / STREAM_HEAP_BYTES));
}

export function defaultProcessLimits(): ProcessLimits {
  return { runnerStreams: runnerStreamsForHeap(), runnerStreamOpens: { burst: 400, perSecond: 200 } };
}

/** The longest a queued open is told to wait: past it, the refusal says this much and the queue does not grow. */
const MAX_QUEUE_MS = 5 * 60_000;

/**
 * Admits opens at a rate; a refused one is told when its turn comes. The turns are slots of
 * 1/`perSecond` handed out in order past the present (`horizon`), so N desktops refused together
 * come back over N/`perSecond` seconds, not at once; each gets up to a slot of jitter on top.
 */
export function createOpenSchedule(rate: Rate, options: { now?: () => number; random?: () => number } = {}) {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const slotMs = 1_000 / rate.perSecond;
  let tokens = rate.burst;
  let refilledAt = now();
  let horizon = 0;
  return {
    /** Null when the open may go on, else how long it should wait (ms). */
    take(): number | null {
      const t = now();
      tokens = Math.min(rate.burst, tokens + ((t - refilledAt) / 1_000) * rate.perSecond);
      refilledAt = t;
      if (tokens >= 1) {
        tokens -= 1;
        return null;
      }
      horizon = Math.min(Math.max(horizon, t) + slotMs, t + MAX_QUEUE_MS);
      return Math.ceil(horizon - t + random() * slotMs);
    },
  };
}
