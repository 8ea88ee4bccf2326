import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { StopOutcome } from "@openwork/remote-session-core/internal";
import type { DesktopContext } from "./desktop-context.js";
import { holderFor } from "./holder-for.js";
import { cancelSessionTasks } from "./store/cancel-session-tasks.js";
import { transaction } from "./store/transaction.js";

/** Stops the session: its tasks cancelled here, or the stop relayed to the desktop that keeps its transcript. */
export async function desktopStop(ctx: DesktopContext, call: TargetCall, session: LedgerSession): Promise<StopOutcome> {
  const relayed = ctx.dialects.relayOf(session);
  if (relayed) {
    await holderFor(ctx, call, session, "remote_session.stop");
    return relayed.stop(ctx.relay, call, session);
  }
  // The task store records the session's state itself (cancelled tasks, or a cancel request).
  const stopped = await transaction(ctx.store, (tx, hints) => cancelSessionTasks(tx, hints, ctx.dialects, session));
  return { sessionId: session.id, stopped };
}
