import { fail } from "../errors/session-error.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import { spendGrew } from "../ledger/session-spend.js";
import { errorFacts } from "../logger.js";
import type { ReadResult, Target, TargetCall } from "../target.js";
import { encodeCursor, observationOf, observedIn, withObservation } from "../transcript/cursor.js";
import { enforceBudget, withPause } from "./budget-pause.js";
import { current, record, type SessionsContext } from "./sessions-context.js";

// A waiting read looks again after 1 s, then 2 s, 4 s, and every 5 s, when its target answered
// at once with what the reader had already seen (targets wait by themselves only while a turn
// runs or a task is queued).
const relookAfter = (looks: number) => Math.min(5_000, 1_000 * 2 ** (looks - 1));

// A budgeted session's reader waits on its target at most this long at a time: a pause is the
// ledger's, which a target's own wait does not watch, so it shows within this.
const PAUSE_SEEN_WITHIN_MS = 1_000;

/** Whether a read brought the reader anything after their cursor: messages, a final reply, another state or request, or a call to read again. */
const broughtNews = (result: ReadResult, seen: string) =>
  result.messages.length > 0 || result.finalAssistantText !== undefined || result.awaitingTarget === true || observationOf(result) !== seen;

/** What a session whose row is still reserved reads as: its row, and nothing from a target that never took it. */
const reservedRead = (session: LedgerSession): ReadResult => ({
  sessionId: session.id,
  target: session.target,
  state: session.state,
  title: session.title,
  messages: [],
  cursor: encodeCursor(session.id, 0),
  hasMore: false,
});

/**
 * A read. One that waits returns on a change after the caller's cursor, never on a state that was
 * already there when they last read: the cursor carries what they were shown, and a target that
 * answers at once with just that is looked at again until something moves or time is up.
 */
export async function readSession(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  session: LedgerSession,
  input: Parameters<Target["read"]>[2],
): Promise<ReadResult> {
  const seen = input.waitMs > 0 ? observedIn(session.id, input.cursor) : undefined;
  const deadline = Date.now() + input.waitMs;
  let latest = session;
  for (let looks = 1; ; looks++) {
    // Later looks need no wait of their own: the target answered at once the first time. A
    // budgeted session's looks each wait a slice, so a pause opened meanwhile is seen.
    const lookedAt = Date.now();
    const waitMs = session.budgeted ? Math.min(Math.max(0, deadline - lookedAt), PAUSE_SEEN_WITHIN_MS) : looks === 1 ? input.waitMs : 0;
    const result = await look(ctx, call, target, latest, { ...input, waitMs });
    latest = { ...latest, state: result.state };
    if (seen === undefined || broughtNews(result, seen) || Date.now() >= deadline || call.signal?.aborted) {
      return { ...result, cursor: withObservation(session.id, result.cursor, observationOf(result)) };
    }
    // A target that answered at once (nothing runs) is looked at again after the slice, never sooner.
    const pause = session.budgeted ? Math.max(0, lookedAt + PAUSE_SEEN_WITHIN_MS - Date.now()) : relookAfter(looks);
    await ctx.changes.wait(session.id, Math.min(deadline - Date.now(), pause), call.signal);
  }
}

/**
 * One look at the session, recording a state the target observed that the ledger does not have
 * yet. A budgeted session's row is read afresh: a pause another writer opened shows at once.
 */
async function look(ctx: SessionsContext, call: TargetCall, target: Target, seen: LedgerSession, input: Parameters<Target["read"]>[2]): Promise<ReadResult> {
  const session = seen.budgeted
    ? ((await ctx.ledger.find(call, seen.id)) ?? fail("unknown_session", "this session no longer exists"))
    : await current(ctx, call, seen);
  if (session.reservedAt) return reservedRead(session);
  const result = await target.read(call, session, input);
  if (result.state !== session.state) {
    await record(ctx, call, session.id, session.state, { state: result.state, ...(result.lastError ? { lastError: result.lastError } : {}) });
  }
  if (!(await recordSpend(ctx, call, session, result)) || !session.budgeted) return withPause(result, session.budgetPause);
  await enforceBudget(ctx, call, target, session);
  return withPause(result, (await ctx.ledger.find(call, session.id))?.budgetPause ?? null);
}

// While a turn runs, its time is recorded when it grew by this much (it grows at every look).
const RUNNING_TIME_SLACK_MS = 30_000;

/**
 * What a target that keeps its session's totals (a cloud worker; a desktop's running time)
 * reported, recorded when it grew, whoever recorded the state: its own statement, so a state
 * another writer moved first does not lose it. Best effort: the read is answered either way.
 * Answers whether it recorded anything (a budget is then checked).
 */
async function recordSpend(ctx: SessionsContext, call: TargetCall, session: LedgerSession, result: ReadResult): Promise<boolean> {
  const observed = result.observedSpend;
  if (!observed || !spendGrew(observed, session.spend, result.state === "running" ? RUNNING_TIME_SLACK_MS : 0)) return false;
  try {
    await ctx.ledger.update(session, { spentAtLeast: observed });
    return true;
  } catch (error) {
    ctx.logger.warn("session ledger: a read's spend was not recorded", { sessionId: session.id, referenceId: call.referenceId, error: errorFacts(error) });
    return false;
  }
}
