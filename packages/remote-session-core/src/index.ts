// Hosts and target authors: the session model, errors, the Target port, the ledger. Writing a
// Target: `/target`; the shapes shared with the runner channel and SSE: `/wire`; the Target
// conformance kit: `/testing`. What only this repository's sibling packages share: `/internal`.
export { newId } from "./ids.js";
export { SESSION_TRANSITIONS } from "./session-state.js";
export { SESSION_LIMITS } from "./limits.js";
export type { Model } from "./wire/model.js";

// Errors as values.
export { SESSION_ERROR_RULES, type SessionErrorCode } from "./errors/codes.js";
export { defineErrorCodes } from "./errors/define-error-codes.js";
export { type SessionError, type SessionErrorExtra, sessionError, errorPayload, SessionFailure, fail, newReferenceId } from "./errors/session-error.js";

// Transcripts (the helpers that build them are in `/target`).
export type { TranscriptMessage } from "./transcript/transcript-message.js";

// The Target port.
export type {
  Target,
  TargetCall,
  Receipt,
  MemberScope,
  ReadResult,
} from "./target.js";
export { createRemoteSessions } from "./sessions.js";

// The ledger, its migrations and guards.

export type { LedgerSession } from "./ledger/ledger-session.js";
export { type ObservedSpend, type Spend, type SpendDelta, sumSpend } from "./ledger/session-spend.js";
export { type Budget, type BudgetPause, BudgetSchema, remainingOf, setsBudget, tighterBudget } from "./ledger/session-budget.js";
export type { HeldBudget, RaisedBudget } from "./ledger/tree-budget.js";
export { budgetPending, CONTINUE_PROMPT, shownState } from "./sessions/budget-pause.js";

export { createSessionLedger } from "./ledger/session-ledger.js";
export { type OnPaused, recordObservedStates } from "./ledger/record-observed.js";

export { type SpawnRules, DEFAULT_SPAWN_RULES } from "./ledger/reserve-spawned-session.js";
export { DEFAULT_LEDGER_RETENTION, pruneLedger } from "./ledger/prune-ledger.js";
export { guardedReserve } from "./guarded-reserve.js";
export { DEFAULT_SCHEMA, type Migration, loadMigrations, migrate, SESSION_LEDGER_SQL_DIRECTORY } from "./migrate.js";
export type { RateLimit } from "./guards/rate-limit.js";
export { type Logger, silentLogger, errorFacts } from "./logger.js";
