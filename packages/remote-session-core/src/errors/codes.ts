/**
 * The error vocabulary of remote sessions, with whether the same call may succeed later. One
 * table: `retryable` is never decided anywhere else. Codes are den-api's wherever the condition
 * is the same; the last block holds ours, for conditions den-api has no code for.
 */
export const SESSION_ERROR_RETRYABLE = {
  // den-api's codes, with den-api's meanings.
  unknown_capability: false,
  invalid_capability_arguments: false,
  membership_required: false,
  insufficient_mcp_scope: false,
  cloud_not_available: false,
  needs_cloud_setup: false,
  cloud_runtime_provisioning: true,
  cloud_runtime_waking: true,
  cloud_runtime_unreachable: true,
  cloud_runtime_failed: false,
  unknown_session: false,
  unknown_workspace: false,
  desktop_offline: true,
  desktop_update_required: false,
  unknown_computer: false,
  ambiguous_computer: false,
  computer_offline: true,
  model_unavailable: false,
  remote_session_idempotency_conflict: false,
  /** A request relayed to an OpenWork desktop (read, send, stop) was not picked up in time. */
  desktop_request_expired: true,
  /** The OpenWork desktop answered a relayed request with a failure. */
  desktop_request_failed: true,
  // Ours.
  rate_limited: true,
  /** An identical call with the same idempotency key is still running elsewhere. */
  idempotency_in_progress: true,
  session_not_active: false,
  /** The session asks nothing under that request id (any more), or the answer does not fit it. */
  input_not_pending: false,
  queue_full: true,
  /** Something failed that the caller cannot fix; the referenceId finds the log line. */
  internal_error: true,
} as const satisfies Record<string, boolean>;

export type SessionErrorCode = keyof typeof SESSION_ERROR_RETRYABLE;

export const SESSION_ERROR_CODES = Object.keys(SESSION_ERROR_RETRYABLE) as SessionErrorCode[];
