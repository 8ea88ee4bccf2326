// The session model.
export { newId, newSessionId, isSessionId } from "./ids.js";
export {
  SESSION_STATES,
  type SessionState,
  SESSION_TRANSITIONS,
  canTransition,
  statesLeadingTo,
  acceptsPrompt,
} from "./session-state.js";
export { SESSION_LIMITS, DEFAULT_TITLE } from "./limits.js";
export { ModelSchema, type Model, ModelReplySchema } from "./wire/model.js";
export { RespondAnswerSchema, type RespondAnswer, RespondAnswerReplySchema } from "./wire/respond-answer.js";
export { sseFrame, sseComment, type SseMessage } from "./wire/sse-frame.js";
export { SseFieldError, type SseField } from "./wire/sse-field-error.js";
export { followSse, type FollowSseOptions, type SseTimers } from "./wire/follow-sse.js";
export { SseSilentError } from "./wire/sse-silent-error.js";
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
export {
  type PendingInput,
  type PendingOption,
  pendingInput,
  RespondInputSchema,
  type RespondInput,
  checkAnswerFits,
  inputNotPending,
} from "./pending-input.js";

// Errors as values.
export { SESSION_ERROR_RETRYABLE, SESSION_ERROR_CODES, type SessionErrorCode } from "./errors/codes.js";
export { type SessionError, type SessionErrorExtra, sessionError, errorPayload, SessionFailure, fail, newReferenceId } from "./errors/session-error.js";
export { type ArgumentIssue, toArgumentIssues } from "./errors/argument-issues.js";

// Text is data: storable whatever a model wrote.
export { storableText, storableJson, findNul } from "./storable-text.js";

// Transcripts.
export { type TranscriptMessage, type ToolCallSummary, boundText } from "./transcript/transcript-message.js";
export { encodeCursor, decodeCursor, resumePointOf, encodeRelayCursor, decodeRelayCursor, type RelayPosition } from "./transcript/cursor.js";
export { type Transcript, answeredAfter, sliceTranscript } from "./transcript/slice-transcript.js";

// The Target port.
export type {
  Target,
  TargetCall,
  OwnerScope,
  MemberScope,
  TargetAvailability,
  RunnerPresence,
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
export { type Queryable } from "./queryable.js";
export { type LedgerSession } from "./ledger/ledger-session.js";
export { type NewSession } from "./ledger/insert-session.js";
export { type SessionPatch, type SessionKey } from "./ledger/update-session.js";
export { type IdempotencyOptions } from "./ledger/run-idempotent.js";
export { type SessionLedger, createSessionLedger } from "./ledger/session-ledger.js";
export { type LedgerRetention, DEFAULT_LEDGER_RETENTION, pruneLedger } from "./ledger/prune-ledger.js";
export { canonicalDigest } from "./digest.js";
export { guardedReserve, isConnectionLost, ReservedConnectionLost, ReserveTimedOut } from "./guarded-reserve.js";
export { DEFAULT_SCHEMA, type Migration, type MigrationOptions, loadMigrations, runMigrations, migrate, SESSION_LEDGER_SQL_DIRECTORY } from "./migrate.js";
export { type RateLimit, CREATE_RATE_LIMIT, SEND_RATE_LIMIT, takeRateLimit } from "./guards/rate-limit.js";
export { type Logger, silentLogger, errorFacts } from "./logger.js";
