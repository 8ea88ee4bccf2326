// Wire contract, v1: schemas (with inferred types), limits, negotiation, paths, error codes.
export { LIMITS } from "./v1/limits.js";
export {
  RUNNER_PROTOCOL_VERSION,
  CLAIM_NEXT_PROTOCOL,
  RUNNER_CAPABILITIES,
  type RunnerCapability,
  type RunnerProfile,
  type TaskRequirements,
  type NegotiationRefusal,
  taskRequirements,
  canRunnerTake,
  grantCapabilities,
} from "./v1/capabilities.js";
export { WORK_KINDS, type WorkKind } from "./v1/work-kinds.js";
export { ModelSchema, type Model, ErrorDetailSchema, type ErrorDetail, GatewayIdSchema } from "./v1/common.js";
export {
  PLATFORMS,
  TokenMintRequestSchema,
  type TokenMintRequest,
  TokenMintResponseSchema,
  type TokenMintResponse,
} from "./v1/registration.js";
export {
  EngineIdSchema,
  InventoryModelSchema,
  type InventoryModel,
  InventoryWorkspaceSchema,
  type InventoryWorkspace,
  InventoryRequestSchema,
  type InventoryRequest,
  type Inventory,
  InventoryResponseSchema,
  type InventoryResponse,
} from "./v1/inventory.js";
export { WorkItemSchema, type WorkItem, WorkResponseSchema, type WorkResponse } from "./v1/work.js";
export {
  ClaimRequestSchema,
  AssignmentSchema,
  type Assignment,
  CreateAssignmentSchema,
  type CreateAssignment,
  SendAssignmentSchema,
  type SendAssignment,
  RespondAssignmentSchema,
  type RespondAssignment,
  AnswerSchema,
  type Answer,
  ClaimResponseSchema,
  type ClaimResponse,
  ClaimNextRequestSchema,
  type ClaimNextRequest,
  ClaimNextResponseSchema,
  type ClaimNextResponse,
} from "./v1/assignment.js";
export {
  HeartbeatRequestSchema,
  type HeartbeatRequest,
  HeartbeatResponseSchema,
  type HeartbeatResponse,
} from "./v1/heartbeat.js";
export { SessionMcpSchema, type SessionMcp } from "./v1/session-mcp.js";
export {
  TASK_EVENT_TYPES,
  type TaskEventType,
  TaskEventSchema,
  type TaskEvent,
  type TaskEventInput,
  PostEventsRequestSchema,
  type PostEventsRequest,
  PostEventsResponseSchema,
  type PostEventsResponse,
} from "./v1/task-events.js";
export {
  CompleteRequestSchema,
  type CompleteRequest,
  type TaskResult,
  CompleteResponseSchema,
  type CompleteResponse,
} from "./v1/complete.js";
export { WAKE_EVENT_TYPES, WakeEventSchema, type WakeEvent, wakeFrame } from "./v1/wake-event.js";
export {
  RUNNER_ERROR_STATUS,
  RUNNER_ERROR_CODES,
  type RunnerErrorCode,
  RunnerErrorBodySchema,
  type RunnerErrorBody,
} from "./v1/error-body.js";
export { type MessageIssue, toMessageIssues } from "./v1/issues.js";
export { RUNNER_ROUTE_PREFIX, RUNNER_PATHS } from "./v1/paths.js";

// Runner tokens: the claims and what a runner may check without the key. Minting and verifying
// are the gateway's (`@openwork/runner-protocol/server`); the runner side is `./client`.
export {
  RUNNER_TOKEN_TTL_MS,
  RunnerTokenClaimsSchema,
  type RunnerTokenClaims,
  OPENWORK_CAPABILITIES,
  type OpenworkCapability,
  decodeRunnerToken,
  mayPresentRunnerToken,
  normalizeAudience,
} from "./v1/token-claims.js";
