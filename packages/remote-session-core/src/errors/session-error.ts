import { randomBytes } from "node:crypto";
import { SESSION_ERROR_RETRYABLE, type SessionErrorCode } from "./codes.js";

/**
 * An error as a value: what a capability returns instead of throwing. `action` is the human
 * step when there is one; `referenceId` ties the result to the server's log line.
 */
export interface SessionError {
  error: SessionErrorCode;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  action?: string;
  referenceId: string;
  /** Extra facts for the caller (the issues of invalid arguments, the runners to choose from…). */
  details?: Record<string, unknown>;
}

/** A new reference id, `ref_` + 12 hex characters. */
export function newReferenceId(): string {
  return `ref_${randomBytes(6).toString("hex")}`;
}

/** Builds a SessionError; `retryable` comes from the code's row in SESSION_ERROR_RETRYABLE. */
export function sessionError(
  code: SessionErrorCode,
  message: string,
  extra: { retryAfterMs?: number; action?: string; referenceId?: string; details?: Record<string, unknown> } = {},
): SessionError {
  return {
    error: code,
    message,
    retryable: SESSION_ERROR_RETRYABLE[code],
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
    ...(extra.action === undefined ? {} : { action: extra.action }),
    referenceId: extra.referenceId ?? newReferenceId(),
    ...(extra.details === undefined ? {} : { details: extra.details }),
  };
}

const MARK = Symbol.for("openwork.remote-session.failure");

/**
 * The one throwable of remote sessions: its payload *is* the SessionError value. Targets throw
 * it where code must unwind (inside a transaction); each surface converts it exactly once (to a
 * tool result, to an HTTP status).
 */
export class SessionFailure extends Error {
  readonly [MARK] = true;
  override readonly name = "SessionFailure";
  constructor(readonly error: SessionError) {
    super(`${error.error}: ${error.message}`);
  }

  static isInstance(value: unknown): value is SessionFailure {
    return typeof value === "object" && value !== null && MARK in value;
  }
}

/** Throws a SessionFailure built like {@link sessionError}. */
export function fail(code: SessionErrorCode, message: string, extra?: Parameters<typeof sessionError>[2]): never {
  throw new SessionFailure(sessionError(code, message, extra));
}
