export { type CloudTarget, type CloudTargetOptions, createCloudTarget } from "./cloud-target.js";
export type { OnObserved } from "./follow-turn.js";
export type { ReadyWorker, WorkerResolution, WorkerResolver } from "./worker-resolver.js";
export { type HttpWorkerResolverOptions, createHttpWorkerResolver, ResolverConfigurationError } from "./http-worker-resolver.js";
export { type WakeAndWaitOptions, createWakeAndWait } from "./wake-and-wait.js";
export { type McpEntryStatus, type PermissionRule, type WorkerClient, createWorkerClient } from "./worker-client.js";
export { newOpencodeMessageId } from "@openwork/opencode-client";
export { type EventSource, type SessionSignals, type SessionWatch, type WorkerEvents, type WorkerEventsOptions, createWorkerEvents } from "./worker-events.js";
