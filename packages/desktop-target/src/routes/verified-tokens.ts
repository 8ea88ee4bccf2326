import { type RunnerTokenSecret, type RunnerTokenVerification, verifyRunnerToken } from "@openwork/runner-protocol/server";

/**
 * The runner tokens one channel accepted lately (one cache per `createRunnerRoutes`, never per
 * module), so a runner's next request skips the signature and the claims' parse: a runner sends
 * the same token for hours. The channel's secret and audiences are fixed when it is created; a
 * token accepted without the audience check (a dialect that does not check it) is kept apart
 * from one accepted with it. Only accepted tokens are kept, with their claims; a kept token is
 * refused as `expired` once its expiry passes, checked at every use, exactly as a fresh
 * verification would. Revocation is not a token's business: the registration cache answers it.
 * At most `maxEntries` are kept; past that the oldest goes.
 */
export interface VerifiedTokens {
  verify(token: string, options: { checksAudience: boolean }): RunnerTokenVerification;
}

export interface VerifiedTokensOptions {
  secret: RunnerTokenSecret;
  /** The audiences a token must name where the dialect checks it (normalized). */
  audiences: readonly string[];
  maxEntries?: number;
  /** The verification it saves (the tests count its calls). */
  verify?: typeof verifyRunnerToken;
  /** The wall clock in ms, as token expiries are. */
  now?: () => number;
}

export function createVerifiedTokens(options: VerifiedTokensOptions): VerifiedTokens {
  const { secret, audiences, maxEntries = 4_096, verify = verifyRunnerToken, now = Date.now } = options;
  const accepted = new Map<string, Extract<RunnerTokenVerification, { ok: true }>>();
  return {
    verify: (token, { checksAudience }) => {
      const key = `${checksAudience ? "a" : "-"}${token}`;
      const kept = accepted.get(key);
      if (kept) {
        if (kept.claims.e > now()) return kept;
        accepted.delete(key);
        return { ok: false, reason: "expired" };
      }
      const verified = verify(token, { secret, ...(checksAudience ? { audiences } : {}), now: now() });
      if (verified.ok) {
        if (accepted.size >= maxEntries) accepted.delete(accepted.keys().next().value!);
        accepted.set(key, Object.freeze({ ok: true, claims: Object.freeze(verified.claims) }));
      }
      return verified;
    },
  };
}
