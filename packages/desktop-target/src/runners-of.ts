import type { TargetCall } from "@openwork/remote-session-core";
import type { DesktopContext } from "./desktop-context.js";
import { presenceOf } from "./presence.js";
import { findPinnedRunners } from "./store/find-pinned-runners.js";
import { listRunners } from "./store/list-runners.js";

/** The runners a create may go to: those a pin names (looked up exactly), else the most recently seen. */
export async function runnersOf(ctx: DesktopContext, call: TargetCall, pin?: string) {
  const pinned = pin === undefined ? [] : await findPinnedRunners(ctx.sql, call, pin);
  // An unknown pin is answered with the member's desktops, to choose from.
  const rows = pinned.length > 0 ? pinned : await listRunners(ctx.sql, call);
  const presence = presenceOf(rows, ctx.timings.presenceWindowMs);
  return rows.map((row, i) => ({ ...row, online: presence[i]!.online, speaks: ctx.dialects.of(row.dialect) }));
}
