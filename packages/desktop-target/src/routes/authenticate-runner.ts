import { verifyRunnerToken } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { touchRunner } from "../store/touch-runner.js";
import type { RouteContext } from "./route-context.js";

/** The bearer token of a request, or an empty string. */
export function bearerOf(request: Request): string {
  const header = request.headers.get("authorization") ?? "";
  return header.startsWith("Bearer ") ? header.slice(7).trim() : "";
}

/**
 * Verifies the runner token (signature, expiry, audience), that its member is still active and
 * that the runner is still registered to them; marks the runner as seen.
 */
export async function authenticateRunner(
  ctx: RouteContext,
  request: Request,
): Promise<RunnerIdentity & { expiresAt: number }> {
  const verified = verifyRunnerToken(bearerOf(request), { secret: ctx.secret, audience: ctx.baseUrl });
  if (!verified.ok) throw new ChannelRefusal("runner_unauthorized", `runner token refused: ${verified.reason}`);
  const { o: organizationId, m: memberId, r: runnerId, c: capabilities, e: expiresAt } = verified.claims;
  if (!(await ctx.isActiveMember({ organizationId, memberId }))) {
    throw new ChannelRefusal("membership_required", "the runner's member is no longer active in the organization");
  }
  const protocolVersion = await touchRunner(ctx.sql, { organizationId, memberId, runnerId });
  if (protocolVersion === null) throw new ChannelRefusal("runner_unauthorized", "runner token refused: runner not registered");
  return { organizationId, memberId, runnerId, capabilities, protocolVersion, expiresAt };
}
