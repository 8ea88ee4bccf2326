const MARK = Symbol.for("openwork.runner-protocol.error");

/** Codes the client makes itself, beside the gateway's RUNNER_ERROR_STATUS codes. */
export type ClientErrorCode = "network_error" | "timeout" | "aborted" | "invalid_response" | "invalid_request" | "token_audience_mismatch";

/**
 * The one error the runner-side client throws. `retryable` says whether the same call may
 * succeed later; `credentialRetired` says the token is no good any more (re-mint it).
 */
export class RunnerProtocolError extends Error {
  readonly [MARK] = true;
  override readonly name = "RunnerProtocolError";
  /** A gateway code (`lease_lost`, `not_found`, …) or a ClientErrorCode. */
  readonly code: string;
  /** The HTTP status, when the gateway answered. */
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** How long the gateway asked the runner to wait (`Retry-After` or the body's `retryAfterMs`). */
  readonly retryAfterMs: number | undefined;

  constructor(init: { code: string; message: string; status?: number; retryAfterMs?: number; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.retryable = init.code === "network_error" || init.code === "timeout" || init.status === 429 || (init.status !== undefined && init.status >= 500);
  }

  /** 401 or 403, or a token bound to another gateway: this credential must be replaced. */
  get credentialRetired(): boolean {
    return this.status === 401 || this.status === 403 || this.code === "token_audience_mismatch";
  }

  /** Works across duplicated copies of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is RunnerProtocolError {
    return typeof error === "object" && error !== null && MARK in error;
  }
}
