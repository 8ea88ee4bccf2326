import { RUNNER_TOKEN_TTL_MS } from "@openwork/runner-protocol/internal";
import { bearerToken } from "@openwork/runner-protocol/server";
import { ChannelRefusal } from "../channel-refusal.js";
import { type AuthenticatedRunner, asAuthenticated, readRegistration, type VerifiedRunner } from "../store/check-registration.js";
import type { RunnerDialect } from "../store/runner-row.js";
import type { RouteContext } from "./route-context.js";

/**
 * Verifies a runner token and that its member is still active; marks the runner as seen. The
 * dialect says the rest (`Dialect.authentication`): whether the token must name one of this
 * gateway's entry points (`audiences`), whether a runner known only from its token is recorded on
 * its first request, where its capabilities come from, and the refusal of a lost membership. A
 * token minted before a revocation is refused in every dialect, and a runner registered for
 * another dialect too. Any other refusal is `runner_unauthorized` (a new mint fixes it).
 *
 * The token and the membership are checked on every request; the registration comes from the
 * channel's registration cache when it was read within `registrationCacheMs` (≤ 1 s: a revoked
 * runner is refused by every process within that bound, see `RegistrationCache`), so a runner's
 * requests in between cost no round trip and no presence write (presence is throttled to a write
 * a minute anyway). `fresh` reads it whatever the cache holds: a stream's opening is its
 * presence, and must clear a disconnect another process marked meanwhile.
 */
export async function authenticateRunner(
  ctx: RouteContext,
  request: Request,
  dialect: RunnerDialect,
  options: { fresh?: boolean } = {},
): Promise<AuthenticatedRunner> {
  const verified = await verifyRunner(ctx, request, dialect);
  return asAuthenticated(verified, await ctx.registrations.registration(verified.holder, () => readRegistration(ctx.sql, verified), options));
}

/**
 * The first half of `authenticateRunner`: the token and the membership, no query of ours. A
 * completion does the second half in its own transaction: the registration from the cache, or
 * read in the transaction's first round trip when the cache holds none.
 */
export async function verifyRunner(ctx: RouteContext, request: Request, name: RunnerDialect): Promise<VerifiedRunner> {
  const dialect = ctx.dialects.of(name);
  const { authentication } = dialect;
  const verified = ctx.tokens.verify(bearerToken(request.headers.get("authorization")), { checksAudience: authentication.checksAudience });
  if (!verified.ok) throw new ChannelRefusal("runner_unauthorized", `runner token refused: ${verified.reason}`);
  const { o: organizationId, m: memberId, r: runnerId, e: expiresAt } = verified.claims;
  if (!(await ctx.isActiveMember({ organizationId, memberId }))) {
    throw new ChannelRefusal(authentication.lostMembership, "the runner's member is no longer active in the organization");
  }
  const holder = { organizationId, memberId, runnerId, mintedAt: expiresAt - RUNNER_TOKEN_TTL_MS };
  return { holder, expiresAt, dialect, tokenCapabilities: verified.claims.c };
}
