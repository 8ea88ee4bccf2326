import type { LedgerSession } from "./ledger/ledger-session.js";
import type { SessionLedger } from "./ledger/session-ledger.js";
import type { SessionPatch } from "./ledger/update-session.js";
import { type Logger, silentLogger } from "./logger.js";
import type { SessionState } from "./session-state.js";
import type { RespondInput } from "./pending-input.js";
import type { CreateResult, ReadResult, RespondResult, SendResult, StopResult, Target, TargetCall, TargetCreateInput } from "./target.js";

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
  /** Records a patch, expecting the session still in `from`; a refusal names itself in the log. */
  const record = async (call: TargetCall, sessionId: string, from: LedgerSession["state"], patch: SessionPatch) => {
    const updated = await ledger.update({ organizationId: call.organizationId, id: sessionId }, { ...patch, expect: from });
    if (updated) return;
    const now = await ledger.find(call, sessionId);
    // Someone newer moved it first: theirs stands. Anything else is a transition the table refuses.
    if (now && now.state !== from) return;
    logger.error("session ledger refused a transition", { sessionId, referenceId: call.referenceId, from, to: patch.state ?? from });
  };

  /** Records the state a target reported after acting on the session, and returns the rest. */
  const settle = async <R>(call: TargetCall, session: LedgerSession, { sessionState, ...result }: R & { sessionState?: SessionState }) => {
    if (sessionState && sessionState !== session.state) await record(call, session.id, session.state, { state: sessionState, activity: true });
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
      return result;
    },

    read: async (call, target, session, input) => {
      const result = await target.read(call, session, input);
      if (result.state !== session.state) {
        await record(call, session.id, session.state, { state: result.state, ...(result.lastError ? { lastError: result.lastError } : {}) });
      }
      return result;
    },

    stop: async (call, target, session) => settle(call, session, await target.stop(call, session)),
    respond: async (call, target, session, input) => settle(call, session, await target.respond(call, session, input)),
  };
}
