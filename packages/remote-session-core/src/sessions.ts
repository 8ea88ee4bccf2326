import type { LedgerSession } from "./ledger/ledger-session.js";
import type { Budget } from "./ledger/session-budget.js";
import type { SessionLedger } from "./ledger/session-ledger.js";
import type { SpawnRules } from "./ledger/reserve-spawned-session.js";
import { type Logger, silentLogger } from "./logger.js";
import type { RespondInput } from "./pending-input.js";
import type { CreateResult, ReadResult, RespondResult, SendResult, StopResult, Target, TargetCall, TargetCreateInput } from "./target.js";
import { createSessionChanges } from "./transcript/session-changes.js";
import { createSession } from "./sessions/create-session.js";
import { readSession } from "./sessions/read-session.js";
import type { SessionsContext } from "./sessions/sessions-context.js";
import { respondToSession, sendToSession, stopSession } from "./sessions/session-turns.js";

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

export type CreateInput = Omit<TargetCreateInput, "sessionId" | "earlier" | "bind"> & {
  /**
   * What the session and every session it starts may spend together. A spawned session's may not
   * pass what the budgets above it have left (refused, typed); without one it shares theirs.
   */
  budget?: Budget;
};

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

export function createRemoteSessions(ledger: SessionLedger, logger: Logger = silentLogger): RemoteSessions {
  const ctx: SessionsContext = { ledger, logger, changes: createSessionChanges() };
  return {
    create: (call, target, input, options) => createSession(ctx, call, target, input, options),
    send: (call, target, session, input) => sendToSession(ctx, call, target, session, input),
    read: (call, target, session, input) => readSession(ctx, call, target, session, input),
    stop: (call, target, session, options) => stopSession(ctx, call, target, session, options),
    respond: (call, target, session, input) => respondToSession(ctx, call, target, session, input),
  };
}
