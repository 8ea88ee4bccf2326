import type { LedgerSession } from "../ledger/ledger-session.js";
import { type BudgetPause, pauseMessage } from "../ledger/session-budget.js";
import { errorFacts } from "../logger.js";
import { checkAnswerFits, inputNotPending, pendingInput, type PendingInput, type RespondInput } from "../pending-input.js";
import type { ReadResult, RespondOutcome, Target, TargetCall } from "../target.js";
import { recordSent, type SessionsContext } from "./sessions-context.js";

/** The prompt a resumed turn gets: said plainly, so the transcript shows why the agent goes on. */
export const CONTINUE_PROMPT = "[The member raised this session's budget after it paused; this message is the gateway's.] Continue where you stopped.";

// States a pause does not hide: the session ended for another reason.
const ENDED_APART = new Set<LedgerSession["state"]>(["failed", "expired"]);

/**
 * After a spend was recorded: pauses the session when a budget is reached, and stops its turn
 * when this writer opened the pause (exactly one does) and a turn was under way. Best effort: a
 * failure is logged, and the next recorded spend checks again.
 */
export async function enforceBudget(ctx: SessionsContext, call: TargetCall, target: Target, session: LedgerSession): Promise<void> {
  try {
    const pause = await ctx.ledger.pauseOverBudget(session);
    if (!pause) return;
    ctx.logger.info("session paused at a budget", {
      sessionId: session.id,
      referenceId: call.referenceId,
      scope: pause.scope,
      reached: pause.reached.join(","),
    });
    ctx.changes.moved(session.id);
    if (pause.interrupted && !(await target.stop(call, session)).stopped) await ctx.ledger.pauseFoundIdle(session, pause.id);
  } catch (error) {
    ctx.logger.warn("session ledger: a budget could not be enforced", { sessionId: session.id, referenceId: call.referenceId, error: errorFacts(error) });
  }
}

/** The `pending` block of a pause: what was reached, and the request `respond` answers. */
export function budgetPending(pause: BudgetPause) {
  const message = pauseMessage(pause);
  return {
    ...pendingInput({ kind: "budget", id: pause.id, title: "Budget reached", detail: message, askedAt: pause.at }),
    scope: pause.scope,
    budgetOf: pause.ownerId,
    budget: pause.budget,
    spent: pause.spent,
    message,
  } satisfies PendingInput;
}

/** A read of a paused session: `waiting_input` on the budget, whatever its engine says, unless it ended apart from it. */
export function withPause(result: ReadResult, pause: BudgetPause | null): ReadResult {
  if (!pause || ENDED_APART.has(result.state)) return result;
  return { ...result, state: "waiting_input", pending: budgetPending(pause) };
}

/** The state a session is shown in: a pause reads as `waiting_input`. */
export function shownState(session: LedgerSession): LedgerSession["state"] {
  return session.budgetPause && !ENDED_APART.has(session.state) ? "waiting_input" : session.state;
}

/**
 * The human's answer to a pause: the budget raised (`raiseBudget`), then the stopped turn resumed
 * with `CONTINUE_PROMPT` on the same engine session. Only the answer that ended the pause resumes.
 */
export async function answerPause(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  session: LedgerSession,
  input: RespondInput,
): Promise<RespondOutcome> {
  checkAnswerFits("budget", input.answer);
  if (!("budget" in input.answer)) return inputNotPending(input.requestId);
  const raised = await ctx.ledger.raiseBudget(call, session.id, input.requestId, input.answer.budget);
  if (!raised) return inputNotPending(input.requestId);
  ctx.changes.moved(session.id);
  const base = { sessionId: session.id, requestId: input.requestId, alreadyAnswered: raised.alreadyAnswered };
  if (raised.alreadyAnswered) return { ...base, state: session.state, delivered: true };
  if (raised.next) return { ...base, state: "waiting_input", delivered: true };
  if (!raised.ended.interrupted) return { ...base, state: session.state, delivered: true };
  const sent = await target.send(call, session, { prompt: CONTINUE_PROMPT });
  await recordSent(ctx, call, session, sent);
  return { ...base, state: sent.sessionState ?? "running", delivered: true };
}
