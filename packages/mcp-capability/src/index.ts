// The capability source in den-api's registry contract. This entry imports no MCP SDK: the
// adapters live in `./sdk-v1` (sdk 1.x + ext-apps 1.7) and `./server-v2` (server 2.x).
export {
  type RemoteSessionSource,
  type RemoteSessionSourceOptions,
  type CapabilityMatch,
  type ExecuteInput,
  type ExecuteOptions,
  type AnyParsedCapability,
  type AuditEvent,
  createRemoteSessionSource,
  DEFAULT_WAITING_READS_PER_MEMBER,
} from "./create-remote-session-source.js";
export type { NotificationLog, SentNotification, NotifiedEntry } from "./notification-log.js";
export { type MemberSlots, createMemberSlots } from "./member-slots.js";
export { type RegistryContext, type SearchContext, type SourceFilter, ALL_SOURCES, remoteSessionContext } from "./registry-context.js";
export {
  type SessionCredentialClaims,
  type SessionCredentialOptions,
  type SessionCredentialRejection,
  type SessionCredentials,
  SESSION_CREDENTIAL_PREFIX,
  SESSION_CREDENTIAL_TTL_MS,
  createSessionCredentials,
} from "./session-credential.js";
export { type RemoteSessionPolicy, DEFAULT_POLICY } from "./policy.js";
export { ACTIONS, type Action, type ParsedCapability, parseName, capabilityName } from "./parse-name.js";
export type { NextStep } from "./capabilities/next-step.js";
export type { ToolResult } from "./to-tool-result.js";
export {
  type BuiltinSkill,
  type BuiltinSkillSource,
  type SkillMatch,
  type SkillToolResult,
  REMOTE_SESSIONS_SKILL,
  createBuiltinSkillSource,
} from "./builtin-skill-source.js";
