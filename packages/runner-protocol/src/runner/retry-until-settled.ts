import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from "../client/backoff.js";
import { RunnerProtocolError } from "../client/runner-protocol-error.js";
import { type Timers, sleep } from "../timers.js";

/**
 * Repeats `call` on transient failures, with backoff, until it succeeds, fails for good, or
 * `signal` aborts. For messages the runner must not lose (events, completions).
 */
export async function retryUntilSettled<T>(call: () => Promise<T>, options: { signal: AbortSignal; timers: Timers; backoff?: Backoff }): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await call();
    } catch (error) {
      const transient = RunnerProtocolError.isInstance(error) && error.retryable;
      if (!transient || options.signal.aborted) throw error;
      await sleep(options.timers, backoffDelay(retry, options.backoff ?? DEFAULT_BACKOFF), options.signal);
    }
  }
}
