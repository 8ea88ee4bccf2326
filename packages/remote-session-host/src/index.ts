// One composition of remote sessions for a gateway host (den-api, the reference gateway, yours).
export { createRemoteSessionHost } from "./remote-session-host.js";
export type {
  HostDesktopOptions,
  HostNotifications,
  HostSessionCredentialOptions,
  McpGate,
  RemoteSessionHost,
  RemoteSessionHostOptions,
} from "./host-options.js";
export { WakeBusUnavailable } from "./host-errors.js";
export { type HostTelemetry, TELEMETRY_SCOPE } from "./telemetry.js";
export type { McpAuth } from "./mcp-auth.js";
export type { McpRoutesOptions } from "./mcp-routes.js";
export { originGuard } from "./origin-guard.js";
export { DEFAULT_MEMBER_LIMITS, type MemberLimits, type Rate } from "./member-limits.js";
export { defaultProcessLimits, type ProcessLimits, runnerStreamsForHeap } from "./process-limits.js";
export type { HostNotifyOptions } from "./notifications.js";
export { MAX_CHANNELS_PER_MEMBER } from "./member-notify-routes.js";
export type { SessionCredentialAuth, SessionMcpEntry } from "./session-credential-auth.js";
export { unexpectedErrorResponse } from "./unexpected-error.js";
export { DEFAULT_SCHEMA } from "@openwork/remote-session-core";
