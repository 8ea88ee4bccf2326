// Push for remote sessions over MCP resource subscriptions, for any host with an MCP 2.x endpoint.
export { type SessionPush, type SessionPushOptions, createSessionPush } from "./session-push.js";
export type { PushAuth, PushBus } from "./push-bus.js";
export { type PushEndpoint, type PushLimits, DEFAULT_PUSH_LIMITS } from "./push-route.js";
export { type PushRetention, DEFAULT_PUSH_RETENTION, migrateSessionPush } from "./push-store.js";
export { LISTEN_REVISION, SESSION_VERSION_META, SESSION_VERSIONS_META, type WatchedUris } from "./push-listen.js";
