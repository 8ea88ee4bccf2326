// The desktop channel, built once per process: its bus, publisher, hub, Target, runner routes, sweeper and timings.
export { type DesktopChannel, type DesktopChannelOptions, type ChannelRoutesOptions, type WorkAnnouncement, createDesktopChannel } from "./desktop-channel.js";
// Work kinds of the host's own on the same channel (an Automation run…): what a host implements.
export type { HostWorkKind, WorkRunner, WorkClaim, WorkLease, WorkRefusal, WorkCompletion } from "./host-work-kind.js";
export { type DesktopTimings, DEFAULT_DESKTOP_TIMINGS } from "./desktop-timings.js";
export { migrateDesktopTarget } from "./migrate-desktop-target.js";

// Its pieces, for a host that composes them itself.
export { type DesktopTargetOptions, createDesktopTarget } from "./desktop-target.js";
export { type WakeHub, type StreamLimits, createWakeHub } from "./wake/wake-hub.js";
export { type WakeBus, postgresWakeBus } from "./wake/wake-bus.js";
export type { Hints } from "./wake/hints.js";
export { transaction } from "./store/transaction.js";
export { type SweeperOptions, startSweeper } from "./sweeper.js";

// The runner routes a gateway mounts.
export { type RunnerRoutes, createRunnerRoutes } from "./routes/create-runner-routes.js";
export type { RunnerRoutesOptions } from "./routes/route-context.js";
export { OPENWORK_BASE_PATHS, openworkDialect } from "./dialects/openwork/openwork-dialect.js";
export type { OpenworkRuns, OpenworkRunItem } from "./dialects/openwork/openwork-runs.js";
// Runner channels as values: the built-in ones, and the set a channel reads rows' dialect names with.
export { desktopRunnerDialect } from "./dialects/desktop-runner/desktop-runner-dialect.js";
export { builtInDialects } from "./dialects/index.js";
export { createDialectSet, type DialectSet, DIALECT_NAME } from "./dialects/dialect-set.js";
export type { Dialect } from "./dialects/dialect.js";
export { CHANNEL_ERROR_STATUS } from "./channel-refusal.js";
