import { fail } from "./errors/session-error.js";
import { isSessionId, newSessionId } from "./ids.js";
import type { LedgerSession } from "./ledger/ledger-session.js";
import type { SessionLedger } from "./ledger/session-ledger.js";
import type { SessionPatch } from "./ledger/update-session.js";
import { checkFanOut, checkSpawn, type SpawnRules } from "./ledger/reserve-spawned-session.js";
import { type Logger, silentLogger } from "./logger.js";
import type { SessionState } from "./session-state.js";
import { inputNotPending, type RespondInput } from "./pending-input.js";
import type { CreateOutcome, CreateResult, ReadResult, RespondResult, SendResult, StopResult, Target, TargetCall, TargetCreateInput } from "./target.js";
import { encodeCursor, observationOf, observedIn, withObservation } from "./transcript/cursor.js";
import { createSessionChanges } from "./transcript/session-changes.js";

// A waiting read looks again after 1 s, then 2 s, 4 s, and every 5 s, when its target answered
// at once with what the reader had already seen (targets wait by themselves only while a turn
// runs or a task is queued).
const relookAfter = (looks: number) => Math.min(5_000, 1_000 * 2 ** (looks - 1));

/** The session id a create's idempotency key fixed at its first attempt (none on keys older than that). */
const reservedSessionId = (reserved: Record<string, unknown> | null) =>
  typeof reserved?.sessionId === "string" && isSessionId(reserved.sessionId) ? reserved.sessionId : undefined;

/** Whether a read brought the reader anything after their cursor: messages, a final reply, another state or request, or a call to read again. */
const broughtNews = (result: ReadResult, seen: string) =>
  result.messages.length > 0 || result.finalAssistantText !== undefined || result.awaitingTarget === true || observationOf(result) !== seen;

/**
 * The session model over the ledger: every session-row write of create, send, read and stop. A
 * target reports what happened; this records it, compare-and-set against the state it was read
 * in, so a slower writer never moves a session back, and a refused transition is logged, never
 * silently dropped.
 */
export interface RemoteSessions {
  create(call: TargetCall, target: Target, input: CreateInput, options?: CreateOptions): Promise<CreateResult>;
  send(call: TargetCall, target: Target, session: LedgerSession, input: Parameters<Target["send"]>[2]): Promise<SendResult>;
  read(call: TargetCall, target: Target, session: LedgerSession, input: Parameters<Target["read"]>[2]): Promise<ReadResult>;
  /**
   * Stops the session's turn. Its right to start sessions ends first, in one statement (with
   * `cascade`, its whole tree's): a create racing the stop is refused, or has landed and is found
   * by a read of the tree made after this returns.
   */
  stop(call: TargetCall, target: Target, session: LedgerSession, options?: { cascade?: boolean }): Promise<StopResult>;
  respond(call: TargetCall, target: Target, session: LedgerSession, input: RespondInput): Promise<RespondResult>;
}

export type CreateInput = Omit<TargetCreateInput, "sessionId" | "earlier" | "bind">;

export interface CreateOptions {
  /**
   * Retries with the same key converge on one session whatever moment an attempt died at: the
   * session id is fixed by the key's first attempt, and each retry finishes what the earlier
   * one began (the target finds what it made for that id) instead of starting a second.
   */
  idempotencyKey?: string;
  /** Runs before every attempt that does work, never before a replayed result (a rate limit). */
  admit?: () => Promise<void>;
  /**
   * The session whose engine asks for this one (from its verified session credential, never
   * from arguments): the new session records it as its spawner, and `rules` are checked before
   * anything is written, again under the spawner's row lock when the row is reserved.
   */
  spawn?: { spawnerId: string; rules: SpawnRules };
}

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

const createdResult = (session: LedgerSession, state: LedgerSession["state"], { webUrl, fields }: CreateOutcome): CreateResult => ({
  sessionId: session.id,
  target: session.target,
  state,
  ...(session.spawnedBy ? { spawnedBy: session.spawnedBy, depth: session.depth } : {}),
  ...(webUrl ? { webUrl } : {}),
  ...(fields && Object.keys(fields).length > 0 ? { fields } : {}),
});

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
  const look = async (call: TargetCall, target: Target, seen: LedgerSession, input: Parameters<Target["read"]>[2]) => {
    const session = await current(call, seen);
    if (session.reservedAt) return reservedRead(session);
    const result = await target.read(call, session, input);
    if (result.state !== session.state) {
      await record(call, session.id, session.state, { state: result.state, ...(result.lastError ? { lastError: result.lastError } : {}) });
    }
    return result;
  };

  /**
   * One attempt of a create under `sessionId`. The row comes first, reserved: a target's own
   * records may reference it, and a retry of the same key finds it. The target takes it (`bind`,
   * or in its own transaction) before anything it cannot undo, so a row still reserved means
   * nothing was made for it: the core answers it and the retention pass removes it in the end.
   */
  const createAt = async (call: TargetCall, target: Target, input: CreateInput, sessionId: string, spawn?: CreateOptions["spawn"]): Promise<CreateResult> => {
    const reserved = await ledger.reserve(call, { id: sessionId, target: target.name, title: input.title, state: "queued" }, spawn);
    if (!reserved) return fail("unknown_session", "the session id of this create belongs to someone else");
    const { session, fresh } = reserved;
    // Stopped before its target took it: nothing is made for it any more.
    if (session.reservedAt && session.state !== "queued") return createdResult(session, session.state, { state: session.state });
    const key = { organizationId: call.organizationId, id: session.id };
    const bind: TargetCreateInput["bind"] = async (binding) => {
      if (!(await ledger.update(key, { ...binding, taken: true, expect: "queued", expectReserved: true }))) {
        fail("session_not_active", "the session was stopped or removed before its create finished");
      }
    };
    const earlier = !fresh && !session.reservedAt ? { earlier: { targetSessionId: session.targetSessionId, targetRef: session.targetRef } } : {};
    let outcome: Awaited<ReturnType<typeof target.create>>;
    try {
      outcome = await target.create(call, { ...input, sessionId: session.id, depth: session.depth, bind, ...earlier });
    } catch (error) {
      await ledger.discard(call, session.id).catch(() => false);
      throw error;
    }
    const { state, targetSessionId, targetRef } = outcome;
    // Only a row still queued moves: a retry finds it where a reader or a stop may have left it.
    const patch = { state, activity: true, taken: true, ...(targetSessionId ? { targetSessionId } : {}), ...(targetRef ? { targetRef } : {}) } as const;
    const recorded = await ledger.update(key, { ...patch, expect: "queued" });
    if (recorded) {
      changes.moved(session.id);
      return createdResult(session, state, outcome);
    }
    const now = await ledger.find(call, session.id);
    if (!now) return fail("unknown_session", "the session was removed before its create finished");
    return createdResult(session, now.state, outcome);
  };

  /**
   * The spawn rules, checked before the attempt costs a rate-limit hit (the reserve checks them
   * again under the spawner's lock). A retry whose row exists skips them: it finishes that row.
   */
  const precheckSpawn = async (call: TargetCall, sessionId: string, spawn: NonNullable<CreateOptions["spawn"]>) => {
    if (await ledger.find(call, sessionId)) return;
    checkSpawn(await ledger.find(call, spawn.spawnerId), spawn.rules);
    checkFanOut(await ledger.liveSpawned(call, spawn.spawnerId), spawn.spawnerId, spawn.rules);
  };

  /** The row as it is now when it was still reserved when last seen (its target may have taken it since). */
  const current = async (call: TargetCall, session: LedgerSession) =>
    session.reservedAt ? ((await ledger.find(call, session.id)) ?? fail("unknown_session", "this session no longer exists")) : session;

  return {
    create: async (call, target, input, options = {}) => {
      const attempt = async (sessionId: string) => {
        if (options.spawn) await precheckSpawn(call, sessionId, options.spawn);
        await options.admit?.();
        return createAt(call, target, input, sessionId, options.spawn);
      };
      if (options.idempotencyKey === undefined) return attempt(newSessionId());
      const spawnedBy = options.spawn ? { spawnedBy: options.spawn.spawnerId } : {};
      const request = { operation: "create" as const, key: options.idempotencyKey, args: { target: target.name, ...input, ...spawnedBy } };
      const { result } = await ledger.idempotent(call, request, (reserved) => attempt(reservedSessionId(reserved) ?? newSessionId()), {
        reserve: () => ({ sessionId: newSessionId() }),
      });
      return result;
    },

    send: async (call, target, seen, input) => {
      const session = await current(call, seen);
      if (session.reservedAt) fail("session_not_active", "the session is still being created and takes no prompt yet; read it first");
      const { sessionState, targetRef, ...result } = await target.send(call, session, input);
      if (sessionState) {
        await record(call, session.id, session.state, {
          state: sessionState,
          activity: true,
          prompted: true,
          lastError: null,
          ...(targetRef ? { targetRef } : {}),
        });
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

    // A reservation whose create died would otherwise never stop: it is marked stopped here, and
    // a retry of its create then makes nothing for it.
    stop: async (call, target, seen, options) => {
      await ledger.requestStop(call, seen.id, { tree: options?.cascade === true });
      if (seen.reservedAt) {
        const key = { organizationId: call.organizationId, id: seen.id };
        if (await ledger.update(key, { state: "stopped", activity: true, expect: "queued", expectReserved: true })) {
          changes.moved(seen.id);
          return { sessionId: seen.id, stopped: true };
        }
      }
      const session = await current(call, seen);
      if (session.reservedAt) return { sessionId: session.id, stopped: false };
      return settle(call, session, await target.stop(call, session));
    },
    respond: async (call, target, seen, input) => {
      const session = await current(call, seen);
      if (session.reservedAt) return inputNotPending(input.requestId);
      return settle(call, session, await target.respond(call, session, input));
    },
  };
}
