import { fail } from "../errors/session-error.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import { inputNotPending, type RespondInput } from "../pending-input.js";
import type { RespondResult, SendResult, StopResult, Target, TargetCall } from "../target.js";
import { answerPause, shownState } from "./budget-pause.js";
import { current, recordSent, type SessionsContext, settle } from "./sessions-context.js";

/** A follow-up prompt: the target sends it, and the session records the move it reports (a new prompt clears its last error). */
export async function sendToSession(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  seen: LedgerSession,
  input: Parameters<Target["send"]>[2],
): Promise<SendResult> {
  const session = await current(ctx, call, seen);
  if (session.reservedAt) fail("session_not_active", "the session is still being created and takes no prompt yet; read it first");
  if (session.budgeted) await ctx.ledger.refuseWhilePaused(call, session, "this send");
  const sent = await target.send(call, session, input);
  await recordSent(ctx, call, session, sent);
  const { sessionState: _, targetRef: __, ...result } = sent;
  return result;
}

/**
 * A stop. A reservation whose create died would otherwise never stop: it is marked stopped here,
 * and a retry of its create then makes nothing for it.
 */
export async function stopSession(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  seen: LedgerSession,
  options?: { cascade?: boolean },
): Promise<StopResult> {
  await ctx.ledger.requestStop(call, seen.id, { tree: options?.cascade === true });
  if (seen.reservedAt) {
    const key = { organizationId: call.organizationId, id: seen.id };
    if (await ctx.ledger.update(key, { state: "stopped", activity: true, expect: "queued", expectReserved: true })) {
      ctx.changes.moved(seen.id);
      return { sessionId: seen.id, stopped: true };
    }
  }
  const session = await current(ctx, call, seen);
  if (session.reservedAt) return { sessionId: session.id, stopped: false };
  const outcome = await target.stop(call, session);
  // A pause (ended by the stop above) held the session with its turn already over: the stop ends it.
  if (!outcome.stopped && session.budgetPause && shownState(session) === "waiting_input") {
    return settle(ctx, call, session, { sessionId: session.id, stopped: true, sessionState: "stopped" });
  }
  return settle(ctx, call, session, outcome);
}

/** The human's answer to what the session asks; a session its target never took asks nothing. */
export async function respondToSession(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  seen: LedgerSession,
  input: RespondInput,
): Promise<RespondResult> {
  const session = await current(ctx, call, seen);
  if (session.reservedAt) return inputNotPending(input.requestId);
  // The gateway's own request: a budget is answered here (an answer to a pause just ended still raises it).
  if ("budget" in input.answer || session.budgetPause?.id === input.requestId)
    return settle(ctx, call, session, await answerPause(ctx, call, target, session, input));
  if (session.budgeted) await ctx.ledger.refuseWhilePaused(call, session, "this answer");
  return settle(ctx, call, session, await target.respond(call, session, { requestId: input.requestId, answer: input.answer }));
}
