/**
 * The error vocabulary of remote sessions (the proposal's and OpenWork's, united), with whether
 * the same call may succeed later. One table: `retryable` is never decided anywhere else.
 */
export const SESSION_ERROR_RETRYABLE = {
  unknown_capability: false,
  invalid_capability_arguments: false,
  insufficient_scope: false,
  membership_required: false,
  cloud_not_available: false,
  needs_cloud_setup: false,
  cloud_runtime_provisioning: true,
  cloud_runtime_waking: true,
  cloud_runtime_unreachable: true,
  cloud_runtime_failed: false,
  unknown_session: false,
  desktop_offline: true,
  unknown_runner: false,
  ambiguous_runner: false,
  runner_update_required: false,
  idempotency_conflict: false,
  rate_limited: true,
  session_not_active: false,
  /** Something failed that the caller cannot fix; the referenceId finds the log line. */
  internal_error: true,
} as const satisfies Record<string, boolean>;

export type SessionErrorCode = keyof typeof SESSION_ERROR_RETRYABLE;

export const SESSION_ERROR_CODES = Object.keys(SESSION_ERROR_RETRYABLE) as SessionErrorCode[];
