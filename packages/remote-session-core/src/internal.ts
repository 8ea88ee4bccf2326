// For this repository's sibling packages only (the targets, the capability, the host, the
// notification packages): names they share with the core that neither a host nor a target
// author needs. No stability promise: anything here may change or go in any release.
export { ModelSchema } from "./wire/model.js";
export { RespondAnswerSchema } from "./wire/respond-answer.js";
export { CreateSessionInputSchema, WorkspaceIdSchema, MessageIdSchema, ReadInputSchema, ListInputSchema } from "./session-inputs.js";
export { EngineRespondInputSchema, RespondInputSchema } from "./pending-input.js";
export { SESSION_ERROR_CODES, type ErrorCodeRule } from "./errors/codes.js";
export { toArgumentIssues } from "./errors/argument-issues.js";
export { LIVE_SPAWN_STATES, checkFanOut, resolveSpawnRules } from "./ledger/reserve-spawned-session.js";
export { canonicalDigest } from "./digest.js";
export { isConnectionLost, ReservedConnectionLost, ReserveTimedOut } from "./guarded-reserve.js";
export { runMigrations } from "./migrate.js";
export { CREATE_RATE_LIMIT, SEND_RATE_LIMIT } from "./guards/rate-limit.js";
export { BODY_TOO_LARGE_HEADERS, BodyTooLarge, MCP_BODY_BYTES, readBodyWithin, withBodyWithin } from "./wire/read-body-within.js";
export { peekJsonBody } from "./wire/peek-json-body.js";
export { canTransition, acceptsPrompt } from "./session-state.js";
export { storableJson, findNul } from "./storable-text.js";
export { answeredAfter } from "./transcript/slice-transcript.js";
export { turnStartMove, lockSessionRow } from "./ledger/turn-start-move.js";
export { formatTraceparent, parseTraceparent } from "./trace-context.js";

// The Target port's parts and the ledger's types, for the sibling targets and the capability (a
// target author types a Target as a whole: `const target: Target = { ... }`).
export type { SessionState } from "./session-state.js";
export type { SendInput, ReadInput } from "./session-inputs.js";
export type { EngineRespondInput, PendingInput, RespondInput } from "./pending-input.js";
export type { ToolCallSummary } from "./transcript/transcript-message.js";
export type { OwnerScope, TargetAvailability, TargetFields, ResultFields } from "./target.js";
export type { CreateOutcome, TargetCreateInput, SendOutcome, StopOutcome, RespondOutcome } from "./target.js";
export type { RemoteSessions } from "./sessions.js";
export type { Queryable } from "./queryable.js";
export type { SessionPatch } from "./ledger/update-session.js";
export type { SessionLedger } from "./ledger/session-ledger.js";
export type { ObservedState } from "./ledger/record-observed.js";
export type { LedgerRetention } from "./ledger/prune-ledger.js";
export { encodeCursor, observationOf, observedIn } from "./transcript/cursor.js";
export type { TargetErrors } from "./errors/define-error-codes.js";
