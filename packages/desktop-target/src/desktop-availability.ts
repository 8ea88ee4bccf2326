import type { TargetCall } from "@openwork/remote-session-core";
import type { TargetAvailability } from "@openwork/remote-session-core/internal";
import type { DesktopContext } from "./desktop-context.js";
import { asComputers } from "./desktop-result-fields.js";
import { presenceOf } from "./presence.js";
import { listRunners } from "./store/list-runners.js";

/** Whether any of the member's desktops is online, with each one's presence. */
export async function desktopAvailability(ctx: DesktopContext, call: TargetCall): Promise<TargetAvailability> {
  const rows = await listRunners(ctx.sql, call);
  const machines = presenceOf(rows, ctx.timings.presenceWindowMs);
  return { available: machines.some((m) => m.online), machines, fields: { machines: asComputers(machines, rows) } };
}
