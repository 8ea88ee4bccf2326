// The runner side, for a desktop app's main process (Electron) or any runner: the client and the
// runner loop (which opens the wake stream itself), their options, defaults and errors. No server code and
// no node:crypto (a bundle test holds this); the wire schemas and types are the main entry's.
export { type Timers, systemTimers } from "./timers.js";
export { type Backoff, DEFAULT_BACKOFF } from "./client/backoff.js";
export { type ClientErrorCode, RunnerProtocolError } from "./client/runner-protocol-error.js";
export type { RetryOptions } from "./client/http-transport.js";
export { type RunnerClient, type RunnerClientOptions, createRunnerClient, requestRunnerToken } from "./client/runner-client.js";
export type { TaskContext, TaskHandler, TaskOutcome, WorkHandler } from "./runner/run-task.js";
export type { SessionMcpView } from "./runner/session-mcp-holder.js";
export { type TaskAbortReason, TaskAbortedError, taskAbortReason } from "./runner/task-aborted.js";
export {
  type Runner,
  type RunnerHandlers,
  type RunnerLogger,
  type RunRunnerOptions,
  DEFAULT_COALESCING,
  DEFAULT_STREAM_POLL_INTERVAL_MS,
  runRunner,
} from "./runner/run-runner.js";
export type { Coalescing } from "./runner/event-outbox.js";
