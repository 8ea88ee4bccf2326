import { ChannelRefusal } from "../channel-refusal.js";
import { presenceOf } from "../presence.js";
import { listRunners } from "../store/list-runners.js";
import type { RouteContext } from "./route-context.js";
import { json } from "./to-response.js";

/** `GET presence` (member route): the member's desktops and whether each is online. */
export async function handlePresence(ctx: RouteContext, request: Request, presenceWindowMs: number): Promise<Response> {
  const member = await ctx.authenticateMember(request);
  if (!member) throw new ChannelRefusal("runner_unauthorized", "sign in as a member to see your desktops");
  const desktops = presenceOf(await listRunners(ctx.sql, member), presenceWindowMs);
  return json(200, { connected: desktops.some((d) => d.online), desktops });
}
