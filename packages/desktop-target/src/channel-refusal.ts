import type { RunnerErrorCode } from "@openwork/runner-protocol";

/**
 * A typed refusal of a runner-channel request. Store statements throw it where a transaction
 * must unwind; `to-response.ts` is the one place that turns it into an HTTP answer.
 */
export class ChannelRefusal extends Error {
  override readonly name = "ChannelRefusal";
  constructor(
    readonly code: RunnerErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
