import { errorFacts, type Logger, silentLogger } from "../logger.js";
import type { SessionState } from "../session-state.js";
import type { TargetCall } from "../target.js";
import type { SessionLedger } from "./session-ledger.js";
import type { ObservedSpend } from "./session-spend.js";

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
 * Records what targets observed, as a read does: compare-and-set against the states the observer
 * knew (`from`) and along SESSION_TRANSITIONS, so it never moves a session back over a newer
 * writer's state. Returns whether the row moved; a refused transition is logged, a session
 * someone else moved meanwhile is theirs.
 */
export function recordObservedStates(ledger: SessionLedger, logger: Logger = silentLogger) {
  return async (call: TargetCall, sessionId: string, observed: ObservedState): Promise<boolean> => {
    const key = { organizationId: call.organizationId, id: sessionId };
    // Its own statement: a state someone else moved first must not lose what was spent.
    if (observed.spend)
      await ledger.update(key, { spentAtLeast: observed.spend }).catch((error: unknown) => {
        logger.warn("session ledger: an observed spend was not recorded", { sessionId, referenceId: call.referenceId, error: errorFacts(error) });
      });
    if (observed.from.length === 0) return false;
    const patch = { state: observed.state, activity: true, ...(observed.lastError ? { lastError: observed.lastError } : {}) };
    for (const from of observed.from) if (await ledger.update(key, { ...patch, expect: from })) return true;
    const now = await ledger.find(call, sessionId);
    if (now && observed.from.includes(now.state) && now.state !== observed.state) {
      logger.error("session ledger refused an observed transition", { sessionId, referenceId: call.referenceId, from: now.state, to: observed.state });
    }
    return false;
  };
}
