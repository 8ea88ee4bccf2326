// For this repository's sibling packages (desktop-target, the gateway's tests, the bench) only:
// the gateway's side of the wire contract — request and reply schemas, negotiation, paths, error
// codes, token claims — and token lifetime. No stability promise: names here may change or go in
// any release. A runner needs none of them (it imports `.` and `./client`). Not for `./client`,
// which an Electron main process bundles.
export { type TaskRequirements, taskRequirements, canRunnerTake, grantCapabilities, STREAM_READY_PROTOCOL } from "./v1/capabilities.js";
export { PLATFORMS, TokenMintRequestSchema } from "./v1/registration.js";
export { EngineIdSchema, InventoryRequestSchema } from "./v1/inventory.js";
export { ClaimRequestSchema, ClaimNextRequestSchema } from "./v1/assignment.js";
export { HeartbeatRequestSchema, type HeartbeatResponse } from "./v1/heartbeat.js";
export { type TaskEvent, PostEventsRequestSchema, type PostEventsRequest, type PostEventsResponse } from "./v1/task-events.js";
export { CompleteRequestSchema, type CompleteRequest, type CompleteResponse, WorkCompleteRequestSchema, type WorkCompleteRequest } from "./v1/complete.js";
export { isBuiltInKind } from "./v1/work-kinds.js";
export { type WakeEvent, wakeFrame } from "./v1/wake-event.js";
export { RUNNER_ERROR_STATUS, RUNNER_ERROR_CODES, type RunnerErrorCode } from "./v1/error-body.js";
export { toMessageIssues } from "./v1/issues.js";
export { RUNNER_ROUTE_PREFIX, RUNNER_PATHS } from "./v1/paths.js";
export { RUNNER_TOKEN_TTL_MS, OPENWORK_CAPABILITIES, type OpenworkCapability, normalizeAudience } from "./v1/token-claims.js";
// The runner loop opens the wake stream itself; the desktop target's tests open one alone.
export { type WakeStream, type WakeStreamOptions, openWakeStream } from "./client/wake-stream.js";
