import { RUNNER_PROTOCOL_VERSION, type TokenMintResponse } from "@openwork/runner-protocol";
import { grantCapabilities, RUNNER_PATHS, TokenMintRequestSchema } from "@openwork/runner-protocol/internal";
import { mintRunnerToken } from "@openwork/runner-protocol/server";
import { ChannelRefusal } from "../channel-refusal.js";
import { registerRunner } from "../store/register-runner.js";
import { entryPointOf } from "./entry-point.js";
import { readJsonBody } from "./read-json-body.js";
import type { RouteContext } from "./route-context.js";
import { json, parseOrRefuse } from "./to-response.js";

/** What the person must do about a desktop its owner revoked (minting again does not bring it back). */
export function revokedStep(runnerId: string): string {
  return `this desktop (${runnerId}) was revoked by its owner; it stays signed out until the owner re-enables it in their list of desktops (POST runners/${encodeURIComponent(runnerId)}/enable), then start it again`;
}

/** `POST token`: the signed-in member registers a runner and gets a runner token. Never over MCP. */
export async function handleToken(ctx: RouteContext, request: Request, prefix: string): Promise<Response> {
  const member = await ctx.authenticateMember(request);
  if (!member) throw new ChannelRefusal("runner_unauthorized", "sign in as a member to register a desktop runner");
  if (!(await ctx.isActiveMember(member))) throw new ChannelRefusal("membership_required", "not an active member");
  const body = parseOrRefuse(TokenMintRequestSchema, await readJsonBody(request));
  const capabilities = grantCapabilities(body.capabilities, body.protocolVersion);
  const protocolVersion = Math.min(body.protocolVersion, RUNNER_PROTOCOL_VERSION);
  const registered = await registerRunner(ctx.sql, member, { ...body, protocolVersion, capabilities, dialect: "desktop-runner" });
  if (!registered) throw new ChannelRefusal("runner_revoked", revokedStep(body.runnerId), { runnerId: body.runnerId });
  // The entry point the request came through when it is one of ours, else the canonical one.
  const entry = entryPointOf(request, `${prefix}${RUNNER_PATHS.token}`, ctx.proxyTrust);
  const { token, claims } = mintRunnerToken({
    secret: ctx.secret,
    organizationId: member.organizationId,
    memberId: member.memberId,
    runnerId: body.runnerId,
    // Our protocol's capabilities live in the registration: a token's `c` is OpenWork's vocabulary.
    capabilities: [],
    audience: entry && ctx.audiences.includes(entry) ? entry : ctx.audiences[0]!,
  });
  ctx.logger.info("desktop runner: token minted", { runnerId: body.runnerId, capabilities: capabilities.length });
  const answer: TokenMintResponse = {
    token,
    expiresAt: new Date(claims.e).toISOString(),
    audience: claims.a,
    protocolVersion,
    capabilities,
    eventsPath: `${prefix}${RUNNER_PATHS.events}`,
  };
  return json(200, answer);
}
