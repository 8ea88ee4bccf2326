import { type CoreErrorCode, type ErrorCodeRule, type ErrorCodeTable, SESSION_ERROR_RULES } from "./codes.js";
import { type SessionError, type SessionErrorExtra, SessionFailure, sessionErrorOf } from "./session-error.js";

/** A target's error codes beside the core's, and the builders that know both. */
export interface TargetErrors<Code extends string> {
  /** The target's own table: what it declares as `Target.errorCodes`. */
  readonly codes: Readonly<Record<Code, ErrorCodeRule>>;
  /** Builds a SessionError of a core code or one of the table's, `retryable` (and a default `action`) from its rule. */
  sessionError(code: CoreErrorCode | Code, message: string, extra?: SessionErrorExtra): SessionError;
  /** Throws a SessionFailure built like `sessionError`. */
  fail(code: CoreErrorCode | Code, message: string, extra?: SessionErrorExtra): never;
}

/**
 * Declares a target's own error codes (`{ desktop_offline: { retryable: true } }`): the target
 * builds its errors with the returned `fail`, and hands `codes` over as its `errorCodes`, so a
 * surface can tell what each code means without a list of every target's codes. Throws when the
 * table redefines a core code: the core's rules hold for every target alike.
 */
export function defineErrorCodes<const T extends ErrorCodeTable>(table: T): TargetErrors<keyof T & string> {
  const redefined = Object.keys(table).filter((code) => Object.hasOwn(SESSION_ERROR_RULES, code));
  if (redefined.length > 0) throw new Error(`error codes ${redefined.join(", ")} are the core's; a target declares only codes of its own`);
  const rules: ErrorCodeTable = { ...SESSION_ERROR_RULES, ...table };
  const sessionError = (code: string, message: string, extra?: SessionErrorExtra) => sessionErrorOf(rules[code] ?? { retryable: false }, code, message, extra);
  return {
    codes: table as Readonly<Record<keyof T & string, ErrorCodeRule>>,
    sessionError,
    fail: (code, message, extra) => {
      throw new SessionFailure(sessionError(code, message, extra));
    },
  };
}
