import type { RetryOptions } from "ky";

/**
 * ky's retry for the cloud target's reads (a worker's GETs, den-api's resolve): twice, on a
 * network error, 429 or a proxy's 502/503/504, after the `Retry-After` a 429 or 503 carries
 * (seconds or an HTTP date, at most 3 s: a call has a 25 s budget, and a longer wait is the
 * caller's, told by `retryAfterMs`), else 0.3 s · 2ⁿ with full jitter, at most 1 s. Never a
 * write (a prompt, an abort, a reply: a retry could act twice) nor a timeout (10 s each).
 */
export const TRANSIENT_READ_RETRY: RetryOptions = {
  limit: 2,
  methods: ["get"],
  statusCodes: [429, 502, 503, 504],
  afterStatusCodes: [429, 503],
  maxRetryAfter: 3_000,
  backoffLimit: 1_000,
  jitter: true,
};
