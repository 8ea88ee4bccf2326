import { z } from "zod";

/**
 * Error codes of the runner routes with their HTTP status: one table for the gateway that
 * answers and the runner that reads.
 */
export const RUNNER_ERROR_STATUS = {
  invalid_request: 400,
  protocol_version_unsupported: 400,
  runner_unauthorized: 401,
  membership_required: 403,
  not_found: 404,
  claim_conflict: 409,
  lease_lost: 409,
  sequence_gap: 409,
  event_conflict: 409,
  completion_conflict: 409,
  identity_conflict: 409,
  runner_update_required: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const satisfies Record<string, number>;

export type RunnerErrorCode = keyof typeof RUNNER_ERROR_STATUS;
export const RUNNER_ERROR_CODES = Object.keys(RUNNER_ERROR_STATUS) as RunnerErrorCode[];

/** The body of every non-2xx answer of a runner route. */
export const RunnerErrorBodySchema = z.looseObject({
  /** A code of RUNNER_ERROR_STATUS; a newer gateway may send one this runner does not know. */
  error: z.string().max(80),
  message: z.string().max(2_000),
  retryAfterMs: z.int().min(0).optional(),
  /** For `invalid_request`: where the body was wrong. */
  issues: z
    .array(z.looseObject({ path: z.string().max(200), message: z.string().max(500) }))
    .max(50)
    .optional(),
});
export type RunnerErrorBody = z.infer<typeof RunnerErrorBodySchema>;
