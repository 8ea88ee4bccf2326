// Hosts and the capability: the session model, errors, the Target port, the ledger. Writing a
// Target: `/target`; the shapes shared with the runner channel and SSE: `/wire`; the Target
// conformance kit: `/testing`.
export { newId, newSessionId, isSessionId } from "./ids.js";
export { SESSION_STATES, type SessionState, SESSION_TRANSITIONS } from "./session-state.js";
export { SESSION_LIMITS } from "./limits.js";
export { ModelSchema, type Model } from "./wire/model.js";
export { RespondAnswerSchema, type RespondAnswer } from "./wire/respond-answer.js";
export {
  CreateSessionInputSchema,
  type CreateSessionInput,
  WorkspaceIdSchema,
  SendInputSchema,
  type SendInput,
  MessageIdSchema,
  ReadInputSchema,
  type ReadInput,
  ListInputSchema,
  type ListInput,
} from "./session-inputs.js";
export { type PendingInput, type PendingOption, RespondInputSchema, type RespondInput } from "./pending-input.js";

// Errors as values.
export {
  SESSION_ERROR_RULES,
  SESSION_ERROR_CODES,
  type SessionErrorCode,
  type CoreErrorCode,
  type ErrorCodeRule,
  type ErrorCodeTable,
} from "./errors/codes.js";
export { defineErrorCodes, type TargetErrors } from "./errors/define-error-codes.js";
export { type SessionError, type SessionErrorExtra, sessionError, errorPayload, SessionFailure, fail, newReferenceId } from "./errors/session-error.js";
export { type ArgumentIssue, toArgumentIssues } from "./errors/argument-issues.js";

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
export type { NewSession } from "./ledger/insert-session.js";
export type { SessionPatch, SessionKey } from "./ledger/update-session.js";
export type { IdempotencyOptions } from "./ledger/run-idempotent.js";
export { type SessionLedger, createSessionLedger } from "./ledger/session-ledger.js";
export { type ObservedState, recordObservedStates } from "./ledger/record-observed.js";
export type { ListOptions } from "./ledger/list-sessions.js";
export { type SpawnRules, DEFAULT_SPAWN_RULES, LIVE_SPAWN_STATES, checkFanOut, resolveSpawnRules } from "./ledger/reserve-spawned-session.js";
export { type LedgerRetention, DEFAULT_LEDGER_RETENTION, pruneLedger } from "./ledger/prune-ledger.js";
export { canonicalDigest } from "./digest.js";
export { guardedReserve, isConnectionLost, ReservedConnectionLost, ReserveTimedOut } from "./guarded-reserve.js";
export { DEFAULT_SCHEMA, type Migration, type MigrationOptions, loadMigrations, runMigrations, migrate, SESSION_LEDGER_SQL_DIRECTORY } from "./migrate.js";
export { type RateLimit, CREATE_RATE_LIMIT, SEND_RATE_LIMIT, takeRateLimit } from "./guards/rate-limit.js";
export { type Logger, silentLogger, errorFacts } from "./logger.js";
