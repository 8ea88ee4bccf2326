// Hosts and target authors: the session model, errors, the Target port, the ledger. Writing a
// Target: `/target`; the shapes shared with the runner channel and SSE: `/wire`; the Target
// conformance kit: `/testing`. What only this repository's sibling packages share: `/internal`.
export { newId } from "./ids.js";
export { type SessionState, SESSION_TRANSITIONS } from "./session-state.js";
export { SESSION_LIMITS } from "./limits.js";
export type { Model } from "./wire/model.js";
export type { SendInput, ReadInput } from "./session-inputs.js";
export type { PendingInput, RespondInput } from "./pending-input.js";

// Errors as values.
export { SESSION_ERROR_RULES, type SessionErrorCode, type ErrorCodeTable } from "./errors/codes.js";
export { defineErrorCodes, type TargetErrors } from "./errors/define-error-codes.js";
export { type SessionError, type SessionErrorExtra, sessionError, errorPayload, SessionFailure, fail, newReferenceId } from "./errors/session-error.js";

// Transcripts (the helpers that build them are in `/target`).
export type { TranscriptMessage, ToolCallSummary } from "./transcript/transcript-message.js";

// The Target port.
export type {
  Target,
  TargetCall,
  OwnerScope,
  MemberScope,
  TargetAvailability,
  TargetFields,
  ResultFields,
  CreateResult,
  CreateOutcome,
  TargetCreateInput,
  SendResult,
  SendOutcome,
  ReadResult,
  StopResult,
  StopOutcome,
  RespondResult,
  RespondOutcome,
  AvailabilityRules,
} from "./target.js";
export { type CreateInput, type CreateOptions, type RemoteSessions, createRemoteSessions } from "./sessions.js";

// The ledger, its migrations and guards.
export type { Queryable } from "./queryable.js";
export type { LedgerSession } from "./ledger/ledger-session.js";
export type { SessionPatch } from "./ledger/update-session.js";
export { type SessionLedger, createSessionLedger } from "./ledger/session-ledger.js";
export { type ObservedState, recordObservedStates } from "./ledger/record-observed.js";
export type { ListOptions } from "./ledger/list-sessions.js";
export { type SpawnRules, DEFAULT_SPAWN_RULES } from "./ledger/reserve-spawned-session.js";
export { type LedgerRetention, DEFAULT_LEDGER_RETENTION, pruneLedger } from "./ledger/prune-ledger.js";
export { guardedReserve } from "./guarded-reserve.js";
export { DEFAULT_SCHEMA, type Migration, loadMigrations, migrate, SESSION_LEDGER_SQL_DIRECTORY } from "./migrate.js";
export type { RateLimit } from "./guards/rate-limit.js";
export { type Logger, silentLogger, errorFacts } from "./logger.js";
