// Wire contract, v1: what a runner names — the version and capabilities it declares, the limits,
// the assignments its handlers take and the results and events they give back, its inventory,
// its token request and answer. The rest of the wire schemas (the gateway's side of them, the wake
// events) are in `./internal`, for this repository's sibling packages only.
export { LIMITS } from "./v1/limits.js";
export { RUNNER_PROTOCOL_VERSION, RUNNER_CAPABILITIES } from "./v1/capabilities.js";
export type { WorkKind } from "./v1/work-kinds.js";
export type { Model } from "./v1/common.js";
export type { TokenMintRequest, TokenMintResponse } from "./v1/registration.js";
export { InventoryModelSchema, type InventoryModel, type InventoryRequest } from "./v1/inventory.js";
export type { Assignment, CreateAssignment, SendAssignment, RespondAssignment, Answer, WorkAssignment, ClaimedAssignment } from "./v1/assignment.js";
export type { SessionMcp } from "./v1/session-mcp.js";
export type { TaskEventInput } from "./v1/task-events.js";
export type { TaskResult, WorkResult } from "./v1/complete.js";
// What a verified runner token says (`verifyRunnerToken` of `./server` answers it).
export type { RunnerTokenClaims } from "./v1/token-claims.js";
