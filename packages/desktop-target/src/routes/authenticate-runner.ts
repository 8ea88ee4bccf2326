import { RUNNER_TOKEN_TTL_MS } from "@openwork/runner-protocol";
import { bearerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import { ChannelRefusal } from "../channel-refusal.js";
import { dialectOf } from "../dialects/index.js";
import { type AuthenticatedRunner, checkRegistration, type VerifiedRunner } from "../store/check-registration.js";
import type { RunnerDialect } from "../store/runner-row.js";
import type { RouteContext } from "./route-context.js";

/**
 * Verifies a runner token and that its member is still active; marks the runner as seen. The
 * dialect says the rest (`Dialect.authentication`): whether the token must name one of this
 * gateway's entry points (`audiences`), whether a runner known only from its token is recorded on
 * its first request, where its capabilities come from, and the refusal of a lost membership. A
 * token minted before a revocation is refused in every dialect, and a runner registered for
 * another dialect too. Any other refusal is `runner_unauthorized` (a new mint fixes it).
 */
export async function authenticateRunner(ctx: RouteContext, request: Request, dialect: RunnerDialect): Promise<AuthenticatedRunner> {
  return checkRegistration(ctx.sql, await verifyRunner(ctx, request, dialect));
}

/**
 * The first half of `authenticateRunner`: the token and the membership, no query of ours. A hot
 * route runs `checkRegistration` (the second half) inside its own transaction, in its first round trip.
 */
export async function verifyRunner(ctx: RouteContext, request: Request, dialect: RunnerDialect): Promise<VerifiedRunner> {
  const { authentication } = dialectOf(dialect);
  const verified = verifyRunnerToken(bearerToken(request.headers.get("authorization")), {
    secret: ctx.secret,
    ...(authentication.checksAudience ? { audiences: ctx.audiences } : {}),
  });
  if (!verified.ok) throw new ChannelRefusal("runner_unauthorized", `runner token refused: ${verified.reason}`);
  const { o: organizationId, m: memberId, r: runnerId, e: expiresAt } = verified.claims;
  if (!(await ctx.isActiveMember({ organizationId, memberId }))) {
    throw new ChannelRefusal(authentication.lostMembership, "the runner's member is no longer active in the organization");
  }
  const holder = { organizationId, memberId, runnerId, mintedAt: expiresAt - RUNNER_TOKEN_TTL_MS };
  return { holder, expiresAt, dialect, tokenCapabilities: verified.claims.c };
}
