import type { Timers } from "../timers.js";

/** Real timers that run every delay at once and record what was asked: backoff without waiting. */
export function recordingTimers(): Timers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    now: () => Date.now(),
    setTimeout: (callback, ms) => {
      delays.push(ms);
      return setTimeout(callback, 0);
    },
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}
