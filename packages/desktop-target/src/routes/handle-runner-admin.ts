import type { MemberScope } from "@openwork/remote-session-core";
import { z } from "zod";
import { ChannelRefusal } from "../channel-refusal.js";
import { presenceOf } from "../presence.js";
import { listRunners } from "../store/list-runners.js";
import { enableRunner, renameRunner, revokeRunner } from "../store/revoke-runner.js";
import { readJsonBody } from "./read-json-body.js";
import type { RouteContext } from "./route-context.js";
import { json, parseOrRefuse } from "./to-response.js";
import { transaction } from "../store/transaction.js";

const RenameSchema = z.strictObject({ name: z.string().trim().min(1).max(120) });

async function memberOf(ctx: RouteContext, request: Request): Promise<MemberScope> {
  const member = await ctx.authenticateMember(request);
  if (!member) throw new ChannelRefusal("runner_unauthorized", "sign in as a member to manage your desktops");
  return member;
}

/** `GET runners` (member route): the member's desktops with presence. */
export async function handleListRunners(ctx: RouteContext, request: Request, presenceWindowMs: number): Promise<Response> {
  const member = await memberOf(ctx, request);
  return json(200, { runners: presenceOf(await listRunners(ctx.sql, member), presenceWindowMs) });
}

/** `PATCH runners/:id` `{ name }` (member route): renames one of the member's desktops. */
export async function handleRenameRunner(ctx: RouteContext, request: Request, runnerId: string): Promise<Response> {
  const member = await memberOf(ctx, request);
  const { name } = parseOrRefuse(RenameSchema, await readJsonBody(request));
  const renamed = await renameRunner(ctx.sql, member, runnerId, name);
  if (!renamed) throw new ChannelRefusal("not_found", "no such desktop");
  return json(200, { runner: renamed });
}

/** `DELETE runners/:id` (member route): revokes one of the member's desktops. */
export async function handleRevokeRunner(ctx: RouteContext, request: Request, runnerId: string): Promise<Response> {
  const member = await memberOf(ctx, request);
  const revoked = await transaction(ctx, (tx, hints) => revokeRunner(tx, hints, ctx.dialects, member, runnerId));
  if (!revoked) throw new ChannelRefusal("not_found", "no such desktop");
  // This process refuses the runner's next request at once, whether or not its own hint comes back.
  ctx.registrations.forget({ ...member, runnerId });
  ctx.logger.info("desktop runner revoked by its owner", { runnerId, failedTasks: revoked.failedTasks });
  return json(200, { revoked: true, ...revoked });
}

/** `POST runners/:id/enable` (member route): re-enables one of the member's revoked desktops; it may mint again. */
export async function handleEnableRunner(ctx: RouteContext, request: Request, runnerId: string): Promise<Response> {
  const member = await memberOf(ctx, request);
  const enabled = await enableRunner(ctx.sql, member, runnerId);
  if (!enabled) throw new ChannelRefusal("not_found", "no such desktop");
  ctx.logger.info("desktop runner re-enabled by its owner", { runnerId });
  return json(200, { runner: enabled });
}
