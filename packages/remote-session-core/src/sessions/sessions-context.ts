import { fail } from "../errors/session-error.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import type { SessionLedger } from "../ledger/session-ledger.js";
import type { SessionPatch } from "../ledger/update-session.js";
import type { Logger } from "../logger.js";
import type { SessionState } from "../session-state.js";
import type { SendOutcome, TargetCall } from "../target.js";
import type { createSessionChanges } from "../transcript/session-changes.js";

/** What every operation of the session model shares: the ledger, the log, and who waits on which session. */
export interface SessionsContext {
  ledger: SessionLedger;
  logger: Logger;
  changes: ReturnType<typeof createSessionChanges>;
}

/** Records a patch, expecting the session still in `from`; a refusal names itself in the log. */
export async function record(ctx: SessionsContext, call: TargetCall, sessionId: string, from: LedgerSession["state"], patch: SessionPatch): Promise<void> {
  const updated = await ctx.ledger.update({ organizationId: call.organizationId, id: sessionId }, { ...patch, expect: from });
  if (updated) return ctx.changes.moved(sessionId);
  const now = await ctx.ledger.find(call, sessionId);
  // Someone newer moved it first: theirs stands. Anything else is a transition the table refuses.
  if (now && now.state !== from) return;
  ctx.logger.error("session ledger refused a transition", { sessionId, referenceId: call.referenceId, from, to: patch.state ?? from });
}

/** Records what a target's send reported: the move, the prompt's references, and a cleared error and stop. */
export async function recordSent(ctx: SessionsContext, call: TargetCall, session: LedgerSession, sent: SendOutcome): Promise<void> {
  const { sessionState, targetRef } = sent;
  if (sessionState) {
    await record(ctx, call, session.id, session.state, {
      state: sessionState,
      activity: true,
      prompted: true,
      lastError: null,
      ...(targetRef ? { targetRef } : {}),
    });
  }
  ctx.changes.moved(session.id);
}

/** Records the state a target reported after acting on the session, and returns the rest. */
export async function settle<R>(
  ctx: SessionsContext,
  call: TargetCall,
  session: LedgerSession,
  { sessionState, ...result }: R & { sessionState?: SessionState },
) {
  if (sessionState && sessionState !== session.state) await record(ctx, call, session.id, session.state, { state: sessionState, activity: true });
  ctx.changes.moved(session.id);
  return result;
}

/** The row as it is now when it was still reserved when last seen (its target may have taken it since). */
export async function current(ctx: SessionsContext, call: TargetCall, session: LedgerSession): Promise<LedgerSession> {
  return session.reservedAt ? ((await ctx.ledger.find(call, session.id)) ?? fail("unknown_session", "this session no longer exists")) : session;
}
