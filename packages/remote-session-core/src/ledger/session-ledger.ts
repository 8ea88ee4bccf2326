import { type RateLimit, takeRateLimit } from "../guards/rate-limit.js";
import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";
import { discardSession } from "./discard-session.js";
import { findSession } from "./find-session.js";
import { insertSession, type NewSession, reserveSession } from "./insert-session.js";
import type { LedgerSession } from "./ledger-session.js";
import { listSessions, listTree, type ListOptions } from "./list-sessions.js";
import { requestStop } from "./request-stop.js";
import type { Budget, BudgetPause } from "./session-budget.js";
import type { Spend } from "./session-spend.js";
import { runningBudgetedTurns } from "./budgeted-turns.js";
import { budgetsOver, type HeldBudget, pauseFoundIdle, pauseOverBudget, type RaisedBudget, raiseBudget, refuseWhilePaused, treeSpend } from "./tree-budget.js";
import { countLiveSpawned, reserveSpawnedSession, type SpawnRules } from "./reserve-spawned-session.js";
import { type IdempotencyOptions, runIdempotent } from "./run-idempotent.js";
import { requireSessionUpdate, type SessionKey, type SessionPatch, updateSession } from "./update-session.js";

/** The session ledger on one connection (a postgres.js client, or a transaction via `in`). */
export interface SessionLedger {
  insert(scope: OwnerScope, session: NewSession): Promise<LedgerSession>;
  /**
   * A create's row under the id its idempotency key fixed: inserted reserved, or the one an
   * earlier attempt left. With `spawn`, the row is the spawner's child, placed and guarded by
   * `rules` under the spawner's row lock (refusals are typed, and nothing is written).
   */
  reserve(
    scope: OwnerScope,
    session: Parameters<typeof reserveSession>[2],
    spawn?: { spawnerId: string; rules: SpawnRules },
  ): ReturnType<typeof reserveSession>;
  /** The member's session, or null (unknown and foreign ids alike). */
  find(scope: OwnerScope, sessionId: string): Promise<LedgerSession | null>;
  /**
   * Applies a patch; null when the session is missing, no longer in `patch.expect`, or the state
   * change is not in SESSION_TRANSITIONS. Check the result: a refusal is never to be ignored.
   */
  update(session: SessionKey, patch: SessionPatch): Promise<LedgerSession | null>;
  /**
   * Applies a patch that must take (the caller holds the row's lock and checked the move): a
   * refusal fails inside PostgreSQL with `refusal` as its message, aborting the transaction, so a
   * COMMIT sent in the same round trip rolls back instead of committing without the move.
   */
  require(session: SessionKey, patch: SessionPatch, refusal: string): Promise<void>;
  /** Removes a session whose create failed before its target took it (still reserved). */
  discard(scope: OwnerScope, sessionId: string): Promise<boolean>;
  list(scope: OwnerScope, options: ListOptions): Promise<{ sessions: LedgerSession[]; nextCursor: string | null }>;
  /** How many of the sessions `spawnerId` spawned are live (queued, waking, running or waiting). */
  liveSpawned(scope: OwnerScope, spawnerId: string): Promise<number>;
  /** Every session `sessionId` spawned, and theirs in turn, parents before children (the member's own only). */
  tree(scope: OwnerScope, sessionId: string): Promise<LedgerSession[]>;
  /**
   * Ends the session's right to start sessions (with `tree`, its whole tree's) at once, in one
   * statement, until a new prompt; answers how many sessions it marked.
   */
  requestStop(scope: OwnerScope, sessionId: string, options: { tree: boolean }): Promise<number>;
  /**
   * Pauses the session when its spend reached a budget it or a session above it holds; answers
   * the pause only to the one writer that opened it (see `pauseOverBudget`).
   */
  pauseOverBudget(session: SessionKey): Promise<BudgetPause | null>;
  /** Marks an open pause's turn as over (its stop found nothing running): raising the budget resumes nothing. */
  pauseFoundIdle(session: SessionKey, pauseId: string): Promise<void>;
  /** Refuses (`budget_paused`, nothing changed) while a session of `session`'s tree is paused at a budget. */
  refuseWhilePaused(scope: OwnerScope, session: { id: string; rootId: string | null }, what: string): Promise<void>;
  /** Raises the budget a pause is about and ends it (see `raiseBudget`); null when no such pause is open. */
  raiseBudget(scope: OwnerScope, sessionId: string, pauseId: string, raise: Budget): Promise<RaisedBudget | null>;
  /** The budgets held by the session and the sessions above it, nearest first, with their trees' spend. */
  budgetsOver(session: SessionKey): Promise<HeldBudget[]>;
  /** What the session and every session below it spent together (one statement, however large the tree). */
  treeSpend(session: SessionKey): Promise<Spend>;
  /** Budgeted turns of `target` running, active within `withinMs` (see `runningBudgetedTurns`): every organization's. */
  runningBudgeted(target: string, withinMs: number, limit: number): Promise<LedgerSession[]>;
  idempotent<T>(
    scope: OwnerScope,
    request: { operation: "create" | "send" | "respond"; key: string; args: unknown },
    run: (reserved: Record<string, unknown> | null) => Promise<T>,
    options?: IdempotencyOptions,
  ): Promise<{ result: T; replayed: boolean }>;
  /** Counts one hit of a per-owner guard; throws `rate_limited` when the window is full. */
  takeRateLimit(scope: OwnerScope, rule?: RateLimit): Promise<void>;
  /** The same ledger on a transaction. */
  in(tx: Queryable): SessionLedger;
}

/** Creates the ledger over postgres.js. Run `migrate(sql)` once at start-up first. */
export function createSessionLedger(sql: Queryable): SessionLedger {
  return {
    insert: (scope, session) => insertSession(sql, scope, session),
    reserve: (scope, session, spawn) => (spawn ? reserveSpawnedSession(sql, scope, session, spawn) : reserveSession(sql, scope, session)),
    find: (scope, sessionId) => findSession(sql, scope, sessionId),
    update: (session, patch) => updateSession(sql, session, patch),
    require: (session, patch, refusal) => requireSessionUpdate(sql, session, patch, refusal),
    discard: (scope, sessionId) => discardSession(sql, scope, sessionId),
    list: (scope, options) => listSessions(sql, scope, options),
    tree: (scope, sessionId) => listTree(sql, scope, sessionId),
    requestStop: (scope, sessionId, options) => requestStop(sql, scope, sessionId, options),
    liveSpawned: (scope, spawnerId) => countLiveSpawned(sql, scope, spawnerId),
    pauseOverBudget: (session) => pauseOverBudget(sql, session),
    pauseFoundIdle: (session, pauseId) => pauseFoundIdle(sql, session, pauseId),
    refuseWhilePaused: (scope, session, what) => refuseWhilePaused(sql, scope, session, what),
    raiseBudget: (scope, sessionId, pauseId, raise) => raiseBudget(sql, scope, sessionId, pauseId, raise),
    budgetsOver: (session) => budgetsOver(sql, session),
    treeSpend: (session) => treeSpend(sql, session),
    runningBudgeted: (target, withinMs, limit) => runningBudgetedTurns(sql, target, withinMs, limit),
    idempotent: (scope, request, run, options) => runIdempotent(sql, scope, request, run, options),
    takeRateLimit: (scope, rule) => takeRateLimit(sql, scope, rule),
    in: (tx) => createSessionLedger(tx),
  };
}
