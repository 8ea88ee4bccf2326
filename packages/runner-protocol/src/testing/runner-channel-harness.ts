import type { CompleteRequest } from "../v1/complete.js";
import type { TaskEvent } from "../v1/task-events.js";

/**
 * What a gateway implementation gives the runner-channel conformance suite: a running server
 * plus the few gateway-side actions the suite cannot do over the runner routes.
 */
export interface RunnerChannelHarness {
  /** The gateway base URL (the audience of its runner tokens). */
  baseUrl: string;
  /** Route prefix; default `/v1/desktop-runner`. */
  prefix?: string;
  /** Registers a runner of the harness's member (of `protocolVersion`, default this package's) and returns a valid token for it. */
  registerRunner(input: { runnerId: string; capabilities?: string[]; protocolVersion?: number }): Promise<{ token: string }>;
  /** Enqueues a `remote_session.create` task for that member, optionally pinned to a runner. */
  enqueueCreate(input: { title: string; prompt: string | null; runnerId?: string }): Promise<{ taskId: string }>;
  /** What `stop` does to a running task: sets `cancelRequested`. */
  requestCancel(taskId: string): Promise<void>;
  /** Ends the current lease now, as the sweeper does after missed heartbeats. */
  loseLease(taskId: string): Promise<void>;
  /** What the gateway recorded: task state (queued, claimed, done, failed, cancelled, interrupted, …). */
  inspect(taskId: string): Promise<{
    state: string;
    attempt: number;
    events: TaskEvent[];
    completion: CompleteRequest | null;
  }>;
  close(): Promise<void>;
}
