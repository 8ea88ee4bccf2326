// The cloud Target, its worker resolvers, and the worker's event stream (a witness worker or a
// host that reads a worker's events itself uses it). How the target talks to a worker (its
// client, wake-and-wait) stays inside.
export { BUDGETED_FOLLOW_MS } from "./cloud-follow.js";
export { type CloudTarget, type CloudTargetOptions, createCloudTarget } from "./cloud-target.js";
export type { ReadyWorker, WorkerResolution, WorkerResolver } from "./worker-resolver.js";
export { type HttpWorkerResolverOptions, createHttpWorkerResolver, ResolverConfigurationError } from "./http-worker-resolver.js";
export type { PermissionRule } from "./worker-client.js";
export { newOpencodeMessageId } from "@openwork/opencode-client/internal";
export { type WorkerEventsOptions, createWorkerEvents } from "./worker-events.js";
