import { defineErrorCodes } from "@openwork/remote-session-core";

/**
 * The cloud target's own error codes (den-api's, with den-api's meanings), beside the core's:
 * `fail` builds them, and the target hands `codes` over as its `errorCodes`.
 */
export const CLOUD_ERRORS = defineErrorCodes({
  /** Cloud sessions are turned off for the organization. */
  cloud_not_available: { retryable: false },
  /** The member has no cloud worker (with the human step). */
  needs_cloud_setup: { retryable: false },
  cloud_runtime_provisioning: { retryable: true },
  cloud_runtime_waking: { retryable: true },
  cloud_runtime_unreachable: { retryable: true },
  cloud_runtime_failed: { retryable: false },
});

export const { fail } = CLOUD_ERRORS;
