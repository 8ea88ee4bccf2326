import { randomBytes } from "node:crypto";
import type { ArgumentIssue } from "./argument-issues.js";
import { type CoreErrorCode, type ErrorCodeRule, SESSION_ERROR_RULES, type SessionErrorCode } from "./codes.js";

/**
 * An error as a value: what a capability returns instead of throwing. `action` is the human
 * step when there is one; `referenceId` ties the result to the server's log line. Rendered as
 * den-api's error payload: `context` members sit beside `error` (`{ error, message, retryable,
 * retryAfterMs?, issues?, action?, ...context, referenceId }`).
 */
export interface SessionError {
  error: SessionErrorCode;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  action?: string;
  /** What is wrong with the arguments (`invalid_capability_arguments`), paths dot-joined. */
  issues?: ArgumentIssue[];
  /** Extra facts for the caller (`target`, `sessionId`, the computers to choose from…). */
  context?: Record<string, unknown>;
  referenceId: string;
}

/** What {@link sessionError} takes besides the code and message. */
export interface SessionErrorExtra {
  retryAfterMs?: number;
  action?: string;
  issues?: ArgumentIssue[];
  context?: Record<string, unknown>;
  referenceId?: string;
}

/** A new reference id, `ref_` + 12 hex characters. */
export function newReferenceId(): string {
  return `ref_${randomBytes(6).toString("hex")}`;
}

/** Builds a SessionError of a core code; `retryable` comes from its row in SESSION_ERROR_RULES. A target's own codes: `defineErrorCodes`. */
export function sessionError(code: CoreErrorCode, message: string, extra: SessionErrorExtra = {}): SessionError {
  return sessionErrorOf(SESSION_ERROR_RULES[code], code, message, extra);
}

/** A SessionError of `code` under its rule: `retryable` from the rule, the rule's `action` unless the error names one. */
export function sessionErrorOf(rule: ErrorCodeRule, code: SessionErrorCode, message: string, extra: SessionErrorExtra = {}): SessionError {
  const action = extra.action ?? rule.action;
  return {
    error: code,
    message,
    retryable: rule.retryable,
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
    ...(action === undefined ? {} : { action }),
    ...(extra.issues === undefined ? {} : { issues: extra.issues }),
    ...(extra.context === undefined ? {} : { context: extra.context }),
    referenceId: extra.referenceId ?? newReferenceId(),
  };
}

/**
 * den-api's error payload of a SessionError: context members flattened beside the fixed ones
 * (which a context member can never overwrite), `referenceId` last.
 */
export function errorPayload(error: SessionError): Record<string, unknown> {
  const { context, referenceId, ...fixed } = error;
  return { ...context, ...fixed, referenceId };
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

/** Throws a SessionFailure of a core code, built like {@link sessionError}. */
export function fail(code: CoreErrorCode, message: string, extra?: SessionErrorExtra): never {
  throw new SessionFailure(sessionError(code, message, extra));
}
