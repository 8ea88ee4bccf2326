// For this repository's sibling packages (remote-session-host, session-push) and its gateway's
// tests: member slots, the notification log's entries, credential claims, the action names and
// the adapters' context reader. No stability promise: these names may change in any release.
// Like the main entry, it imports no MCP SDK.
export type { SentNotification } from "./notification-log.js";
export { createMemberSlots, type MemberSlots } from "./member-slots.js";
export type { SessionCredentialClaims } from "./session-credential.js";
export { ACTIONS, capabilityName } from "./parse-name.js";
export { contextFromAuthInfo } from "./mcp-tools.js";
