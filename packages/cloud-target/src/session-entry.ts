import type { PermissionRule } from "./worker-client.js";

/**
 * Every cloud session has its own MCP entry in its workspace's engine, named after the gateway
 * session (the credential is that session's, and the id survives a retried create). The engine
 * offers each entry's tools to every session unless a session's rules hide them, so each session
 * is created denying all these entries (and the shared `openwork` entry of earlier versions) but
 * its own: the last matching rule wins. The prefix is distinct from openwork-server's own entries
 * (`openwork-cloud`, `openwork-ui`), and short enough that `ows-rs_…_search_capabilities` stays
 * within the 64 characters model providers allow a tool name.
 */
const ENTRY_PREFIX = "ows-";

/** The engine's MCP entry of gateway session `sessionId`. */
export function sessionEntryName(sessionId: string): string {
  // opencode names a tool `<entry>_<tool>` with anything outside [A-Za-z0-9_-] made `_`.
  return `${ENTRY_PREFIX}${sessionId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** The rules that let session `sessionId` see the tools of its own entry only. */
export function sessionEntryRules(sessionId: string): PermissionRule[] {
  return [
    { permission: `${ENTRY_PREFIX}*`, pattern: "*", action: "deny" },
    { permission: "openwork_*", pattern: "*", action: "deny" },
    ownEntryRule(sessionId),
  ];
}

/** Whether `rules` (a session's, as the engine keeps them) already hide every entry but its own. */
export function hasEntryRules(rules: readonly PermissionRule[], sessionId: string): boolean {
  const last = (rule: PermissionRule) => rules.findLastIndex((r) => r.permission === rule.permission && r.action === rule.action);
  const [denyAll, , allowOwn] = sessionEntryRules(sessionId) as [PermissionRule, PermissionRule, PermissionRule];
  return last(denyAll) >= 0 && last(allowOwn) > last(denyAll);
}

function ownEntryRule(sessionId: string): PermissionRule {
  return { permission: `${sessionEntryName(sessionId)}_*`, pattern: "*", action: "allow" };
}
