import type { LedgerSession } from "./ledger/ledger-session.js";
import type { SessionLedger } from "./ledger/session-ledger.js";
import type { SessionPatch } from "./ledger/update-session.js";
import { type Logger, silentLogger } from "./logger.js";
import type { SessionState } from "./session-state.js";
import type { RespondInput } from "./pending-input.js";
import type { CreateResult, ReadResult, RespondResult, SendResult, StopResult, Target, TargetCall, TargetCreateInput } from "./target.js";
import { observationOf, observedIn, withObservation } from "./transcript/cursor.js";
import { createSessionChanges } from "./transcript/session-changes.js";

// A waiting read looks again after 1 s, then 2 s, 4 s, and every 5 s, when its target answered
// at once with what the reader had already seen (targets wait by themselves only while a turn
// runs or a task is queued).
const relookAfter = (looks: number) => Math.min(5_000, 1_000 * 2 ** (looks - 1));

/** Whether a read brought the reader anything after their cursor: messages, a final reply, another state or request. */
const broughtNews = (result: ReadResult, seen: string) =>
  result.messages.length > 0 || result.finalAssistantText !== undefined || result.deferred !== undefined || observationOf(result) !== seen;

/**
 * The session model over the ledger: every session-row write of create, send, read and stop. A
 * target reports what happened; this records it, compare-and-set against the state it was read
 * in, so a slower writer never moves a session back, and a refused transition is logged, never
 * silently dropped.
 */
export interface RemoteSessions {
  create(call: TargetCall, target: Target, input: Omit<TargetCreateInput, "sessionId">): Promise<CreateResult>;
  send(call: TargetCall, target: Target, session: LedgerSession, input: Parameters<Target["send"]>[2]): Promise<SendResult>;
  read(call: TargetCall, target: Target, session: LedgerSession, input: Parameters<Target["read"]>[2]): Promise<ReadResult>;
  stop(call: TargetCall, target: Target, session: LedgerSession): Promise<StopResult>;
  respond(call: TargetCall, target: Target, session: LedgerSession, input: RespondInput): Promise<RespondResult>;
}

export function createRemoteSessions(ledger: SessionLedger, logger: Logger = silentLogger): RemoteSessions {
  const changes = createSessionChanges();
  /** Records a patch, expecting the session still in `from`; a refusal names itself in the log. */
  const record = async (call: TargetCall, sessionId: string, from: LedgerSession["state"], patch: SessionPatch) => {
    const updated = await ledger.update({ organizationId: call.organizationId, id: sessionId }, { ...patch, expect: from });
    if (updated) return changes.moved(sessionId);
    const now = await ledger.find(call, sessionId);
    // Someone newer moved it first: theirs stands. Anything else is a transition the table refuses.
    if (now && now.state !== from) return;
    logger.error("session ledger refused a transition", { sessionId, referenceId: call.referenceId, from, to: patch.state ?? from });
  };

  /** Records the state a target reported after acting on the session, and returns the rest. */
  const settle = async <R>(call: TargetCall, session: LedgerSession, { sessionState, ...result }: R & { sessionState?: SessionState }) => {
    if (sessionState && sessionState !== session.state) await record(call, session.id, session.state, { state: sessionState, activity: true });
    changes.moved(session.id);
    return result;
  };

  /** One look at the session, recording a state the target observed that the ledger does not have yet. */
  const look = async (call: TargetCall, target: Target, session: LedgerSession, input: Parameters<Target["read"]>[2]) => {
    const result = await target.read(call, session, input);
    if (result.state !== session.state) {
      await record(call, session.id, session.state, { state: result.state, ...(result.lastError ? { lastError: result.lastError } : {}) });
    }
    return result;
  };

  return {
    create: async (call, target, input) => {
      // The row comes first: a target's own records may reference it, and a failure after the
      // target acted leaves a session the caller can see instead of an orphan.
      const reserved = await ledger.insert(call, { target: target.name, title: input.title, state: "queued" });
      let outcome;
      try {
        outcome = await target.create(call, { ...input, sessionId: reserved.id });
      } catch (error) {
        await ledger.discard(call, reserved.id).catch(() => false);
        throw error;
      }
      const { state, targetSessionId, targetRef, webUrl, runner, expiresAt } = outcome;
      if (state !== reserved.state || targetSessionId || targetRef) {
        await record(call, reserved.id, reserved.state, {
          state,
          activity: true,
          ...(targetSessionId ? { targetSessionId } : {}),
          ...(targetRef ? { targetRef } : {}),
        });
      }
      return { sessionId: reserved.id, target: target.name, state, ...(webUrl ? { webUrl } : {}), ...(runner ? { runner } : {}), ...(expiresAt ? { expiresAt } : {}) };
    },

    send: async (call, target, session, input) => {
      const { sessionState, targetRef, ...result } = await target.send(call, session, input);
      if (sessionState) {
        await record(call, session.id, session.state, { state: sessionState, activity: true, lastError: null, ...(targetRef ? { targetRef } : {}) });
      }
      changes.moved(session.id);
      return result;
    },

    // A read that waits returns on a change after the caller's cursor, never on a state that was
    // already there when they last read: the cursor carries what they were shown, and a target
    // that answers at once with just that is looked at again until something moves or time is up.
    read: async (call, target, session, input) => {
      const seen = input.waitMs > 0 ? observedIn(session.id, input.cursor) : undefined;
      const deadline = Date.now() + input.waitMs;
      let current = session;
      for (let looks = 1; ; looks++) {
        // Later looks need no wait of their own: the target answered at once the first time.
        const result = await look(call, target, current, looks === 1 ? input : { ...input, waitMs: 0 });
        current = { ...current, state: result.state };
        if (seen === undefined || broughtNews(result, seen) || Date.now() >= deadline || call.signal?.aborted) {
          return { ...result, cursor: withObservation(session.id, result.cursor, observationOf(result)) };
        }
        await changes.wait(session.id, Math.min(deadline - Date.now(), relookAfter(looks)), call.signal);
      }
    },

    stop: async (call, target, session) => settle(call, session, await target.stop(call, session)),
    respond: async (call, target, session, input) => settle(call, session, await target.respond(call, session, input)),
  };
}
