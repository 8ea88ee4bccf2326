import type { MemberScope } from "@openwork/remote-session-core";

/** A worker the gateway can talk to now. */
export interface ReadyWorker {
  workerId: string;
  /** Base URL of the worker's openwork-server. */
  url: string;
  /**
   * Bearer token for the worker (collaborator scope): the only credential the gateway sends.
   * The owner-level host token a resolver may also return is never used (openwork-server does
   * not check it on the routes the gateway calls: least privilege).
   */
  clientToken: string;
}

/** Where the member's cloud worker stands. Resolving a stopped worker starts waking it. */
export type WorkerResolution =
  | ({ status: "ready" } & ReadyWorker)
  | { status: "waking"; workerId?: string; reason?: string }
  | { status: "provisioning"; workerId?: string; reason?: string }
  | { status: "failed"; workerId?: string; reason?: string }
  | { status: "missing" };

/**
 * The port between the cloud target and whoever knows the member's worker. den-api passes its
 * internal resolver; `createHttpWorkerResolver` calls den-api's `GET /v1/cloud/gateway/resolve`.
 */
export interface WorkerResolver {
  resolve(scope: MemberScope, signal?: AbortSignal): Promise<WorkerResolution>;
}
