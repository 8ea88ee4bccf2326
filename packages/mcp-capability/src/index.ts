// The capability source in den-api's registry contract. This entry imports no MCP SDK: the
// adapters live in `./sdk-v1` (sdk 1.x + ext-apps 1.7) and `./server-v2` (server 2.x).
export {
  type RemoteSessionSource,
  type RemoteSessionSourceOptions,
  type CapabilityMatch,
  createRemoteSessionSource,
} from "./create-remote-session-source.js";
export type { NotificationLog } from "./notification-log.js";
export { type Audit, type AuditEvent, type AuditIntent, type AuditLog, DEFAULT_AUDIT_TIMEOUT_MS } from "./audit.js";
export { type RegistryContext, type SearchContext, remoteSessionContext } from "./registry-context.js";
export { type SessionCredentialOptions, type SessionCredentials, createSessionCredentials } from "./session-credential.js";
export { type RemoteSessionPolicy, DEFAULT_POLICY } from "./policy.js";
export type { BudgetRules, BudgetScope } from "./budget-rules.js";
export { type ParsedCapability, parseName } from "./parse-name.js";
export type { ToolResult } from "./to-tool-result.js";
export { type BuiltinSkillSource, REMOTE_SESSIONS_SKILL, createBuiltinSkillSource } from "./builtin-skill-source.js";
