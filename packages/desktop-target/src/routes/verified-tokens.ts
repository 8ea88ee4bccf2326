import { type RunnerTokenVerification, verifyRunnerToken } from "@openwork/runner-protocol/server";

/** What a channel verifies its runners' tokens with. */
export type TokenVerification = Parameters<typeof verifyRunnerToken>[1];

/**
 * The runner tokens one channel accepted lately (one cache per `createRunnerRoutes`, never per
 * module), so a runner's next request skips the signature and the claims' parse: a runner sends
 * the same token for hours. Only accepted tokens are kept, with their claims, under the options
 * that accepted them; a kept token is refused as `expired` once its expiry passes, checked at
 * every use, exactly as a fresh verification would. Revocation is not a token's business: the
 * registration cache answers it. At most `maxEntries` are kept; past that the oldest goes.
 */
export interface VerifiedTokens {
  verify(token: string, options: TokenVerification): RunnerTokenVerification;
}

/** `verify` is the verification it saves (the tests count its calls); `now` the wall clock in ms, as token expiries are. */
export function createVerifiedTokens(options: { maxEntries?: number; verify?: typeof verifyRunnerToken; now?: () => number } = {}): VerifiedTokens {
  const { maxEntries = 4_096, verify = verifyRunnerToken, now = Date.now } = options;
  const accepted = new Map<string, Extract<RunnerTokenVerification, { ok: true }>>();
  return {
    verify: (token, verification) => {
      // The secret is the channel's; whether audiences are checked depends on the dialect.
      const key = `${verification.audiences ? "a" : "-"}${token}`;
      const kept = accepted.get(key);
      if (kept) {
        if (kept.claims.e > now()) return kept;
        accepted.delete(key);
        return { ok: false, reason: "expired" };
      }
      const verified = verify(token, { ...verification, now: now() });
      if (verified.ok) {
        if (accepted.size >= maxEntries) accepted.delete(accepted.keys().next().value!);
        accepted.set(key, verified);
      }
      return verified;
    },
  };
}
