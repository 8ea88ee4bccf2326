import { errorFacts, type Logger, silentLogger } from "../logger.js";
import type { SessionState } from "../session-state.js";
import type { TargetCall } from "../target.js";
import type { SessionLedger } from "./session-ledger.js";
import type { LedgerSession } from "./ledger-session.js";
import type { BudgetPause } from "./session-budget.js";
import type { ObservedSpend } from "./session-spend.js";
import type { SessionKey } from "./update-session.js";

/**
 * A state a target saw a session in without anyone reading it (the cloud target following a turn
 * it started): the state, its error, and the states the ledger may hold while that is news (the
 * turn's own: a create's row may still be `queued` when its turn already ended).
 */
export interface ObservedState {
  /** Empty: nothing to move (only `spend` is news). */
  from: readonly SessionState[];
  state: SessionState;
  lastError?: { error: string; message: string };
  /** What the session spent in total as the target saw it: recorded never below what the row has. */
  spend?: ObservedSpend;
}

/**
 * Stops the turn of a session a recorded spend paused at a budget (the host's: it knows the
 * session's target). Called once per pause, by the writer that opened it.
 */
export type OnPaused = (call: TargetCall, session: LedgerSession, pause: BudgetPause) => Promise<{ stopped: boolean }>;

/**
 * Records what targets observed, as a read does: compare-and-set against the states the observer
 * knew (`from`) and along SESSION_TRANSITIONS, so it never moves a session back over a newer
 * writer's state. Returns whether the row moved; a refused transition is logged, a session
 * someone else moved meanwhile is theirs. A spend that reaches a budget pauses the session, and
 * `onPaused` stops its turn.
 */
export function recordObservedStates(ledger: SessionLedger, logger: Logger = silentLogger, onPaused?: OnPaused) {
  return async (call: TargetCall, sessionId: string, observed: ObservedState): Promise<boolean> => {
    const key = { organizationId: call.organizationId, id: sessionId };
    const moved = await moveObserved(ledger, logger, call, key, observed);
    // Its own statement, after the move (a pause then knows whether a turn still runs): a state
    // someone else moved first must not lose what was spent.
    if (observed.spend) await recordSpend(ledger, logger, call, key, observed.spend, onPaused);
    return moved;
  };
}

/** Moves the row to the observed state, compare-and-set against the states the observer knew. */
async function moveObserved(ledger: SessionLedger, logger: Logger, call: TargetCall, key: SessionKey, observed: ObservedState): Promise<boolean> {
  if (observed.from.length === 0) return false;
  const patch = { state: observed.state, activity: true, ...(observed.lastError ? { lastError: observed.lastError } : {}) };
  for (const from of observed.from) if (await ledger.update(key, { ...patch, expect: from })) return true;
  const now = await ledger.find(call, key.id);
  if (now && observed.from.includes(now.state) && now.state !== observed.state) {
    logger.error("session ledger refused an observed transition", { sessionId: key.id, referenceId: call.referenceId, from: now.state, to: observed.state });
  }
  return false;
}

/** Records an observed spend, then pauses the session if that reached a budget. Best effort: logged. */
async function recordSpend(ledger: SessionLedger, logger: Logger, call: TargetCall, key: SessionKey, spend: ObservedSpend, onPaused?: OnPaused): Promise<void> {
  try {
    const session = await ledger.update(key, { spentAtLeast: spend });
    if (!session?.budgeted) return;
    const pause = await ledger.pauseOverBudget(key);
    if (!pause) return;
    logger.info("session paused at a budget", { sessionId: key.id, referenceId: call.referenceId, scope: pause.scope, reached: pause.reached.join(",") });
    if (pause.interrupted && onPaused && !(await onPaused(call, session, pause)).stopped) await ledger.pauseFoundIdle(key, pause.id);
  } catch (error) {
    logger.warn("session ledger: an observed spend was not recorded or checked", {
      sessionId: key.id,
      referenceId: call.referenceId,
      error: errorFacts(error),
    });
  }
}
