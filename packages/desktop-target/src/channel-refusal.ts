import { RUNNER_ERROR_STATUS, type RunnerErrorCode } from "@openwork/runner-protocol/internal";

/**
 * The runner channel's codes with their status: the protocol's, and the desktop target's own. A
 * runner reads a code it does not know by its status (a 403 at the mint: stop, a human must act).
 */
export const CHANNEL_ERROR_STATUS = {
  ...RUNNER_ERROR_STATUS,
  /** The mint of a desktop its owner revoked: only the owner re-enabling it brings it back. */
  runner_revoked: 403,
  /** Events past what one turn may store: the turn has been ended (`failed`, `turn_too_large`); stop it. */
  turn_too_large: 413,
} as const satisfies Record<string, number>;
export type ChannelErrorCode = RunnerErrorCode | keyof typeof CHANNEL_ERROR_STATUS;

/**
 * A typed refusal of a runner-channel request. Store statements throw it where a transaction
 * must unwind; `to-response.ts` is the one place that turns it into an HTTP answer.
 */
export class ChannelRefusal extends Error {
  override readonly name = "ChannelRefusal";
  constructor(
    readonly code: ChannelErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
