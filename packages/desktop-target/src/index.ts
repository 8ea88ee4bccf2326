// The desktop channel, built once per process: its bus, publisher, hub, Target, runner routes, sweeper and timings.
export { type DesktopChannel, type DesktopChannelOptions, type ChannelRoutesOptions, createDesktopChannel } from "./desktop-channel.js";
export { type DesktopTimings, DEFAULT_DESKTOP_TIMINGS, MAX_REGISTRATION_CACHE_MS, resolveTimings } from "./desktop-timings.js";

// Its pieces, for a host that composes them itself.
export { type DesktopTargetOptions, createDesktopTarget } from "./desktop-target.js";
export { migrateDesktopTarget, DESKTOP_TARGET_SQL_DIRECTORY } from "./migrate-desktop-target.js";
export {
  type WakeHub,
  type WakeSignal,
  type PushSubscriber,
  type RevokeSubscriber,
  type StreamLimits,
  DEFAULT_STREAM_LIMITS,
  createWakeHub,
} from "./wake/wake-hub.js";
export {
  type WakeBus,
  type WakeBusHandlers,
  type HintBatch,
  type SessionHint,
  type PushHint,
  type PushHintKind,
  type RevokeHint,
  postgresWakeBus,
  readPush,
  readRevokes,
  readSessions,
  readWakes,
  renderPush,
} from "./wake/wake-bus.js";
export type { WakeNotice } from "./wake/channels.js";
export { type Hints, type HintPublisher, type GatheredHints, type PublisherStats, createHintPublisher } from "./wake/hints.js";
export { type Commit, transaction, type TransactionScope } from "./store/transaction.js";
export { type SweeperOptions, startSweeper } from "./sweeper.js";

// The runner routes a gateway mounts.
export { type RunnerRoutes, createRunnerRoutes } from "./routes/create-runner-routes.js";
export { OPENWORK_BASE_PATHS, openworkDialect } from "./dialects/openwork/openwork-dialect.js";
// Runner channels as values: the built-in ones, and the set a channel reads rows' dialect names with.
export { desktopRunnerDialect } from "./dialects/desktop-runner/desktop-runner-dialect.js";
export { builtInDialects } from "./dialects/index.js";
export { createDialectSet, type DialectSet, DIALECT_NAME } from "./dialects/dialect-set.js";
export type { Dialect } from "./dialects/dialect.js";
export type { RunnerRoutesOptions } from "./routes/route-context.js";
export type { ProxyTrust } from "./routes/entry-point.js";
export { CHANNEL_ERROR_STATUS, type ChannelErrorCode } from "./channel-refusal.js";
export { MAX_TASK_EVENT_BYTES } from "./store/append-events.js";

// The task model, for hosts that inspect tasks.
export { TASK_STATES, type TaskState, TASK_TRANSITIONS, toSessionState } from "./task-state.js";
