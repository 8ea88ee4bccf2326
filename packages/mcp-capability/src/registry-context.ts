/**
 * den-api's registry context, as its capability registry hands it to every source. Only the
 * members this source reads are declared: den-api's full context (with `app`, `env`, `catalog`,
 * …) is assignable as it is.
 */
export interface RegistryContext {
  /** The verified MCP token. `scopes` is a Set: den-api's scopes are `mcp:read`, `mcp:write`, `offline_access`. */
  principal: { userId: string; scopes: ReadonlySet<string> };
  organizationId: string;
  /** The caller's active membership; null when the caller is not an active member. */
  member: { orgMembershipId: string; teamIds: readonly string[] } | null;
  /** Whether remote sessions exist for this deployment and organization. */
  remoteSessionsEnabled: boolean;
  /**
   * The remote session whose engine made this call, from a session credential the host verified
   * (`createSessionCredentials`), never from arguments: what it creates is that session's
   * spawned session. Absent for a person's own client.
   */
  remoteSession?: { sessionId: string };
}

/** The sources a `search_capabilities` call asked for (from its `type` argument). */
export interface SourceFilter {
  api: boolean;
  admin: boolean;
  mcp: boolean;
  marketplace: boolean;
  skills: boolean;
}

/** What `search` receives: the registry context plus the source filter. */
export interface SearchContext extends RegistryContext {
  sourceFilter: SourceFilter;
}

/** Every source, as den-api's `type: "all"`. */
export const ALL_SOURCES: SourceFilter = { api: true, admin: true, mcp: true, marketplace: true, skills: true };

/**
 * Builds den-api's context for a host that is not den-api (the reference gateway, a test): the
 * same object den-api passes, so there is one context type. `orgMembershipId: null` means "not an
 * active member".
 */
export function remoteSessionContext(input: {
  organizationId: string;
  userId: string;
  orgMembershipId: string | null;
  scopes: Iterable<string>;
  teamIds?: readonly string[];
  remoteSessionsEnabled?: boolean;
  sourceFilter?: SourceFilter;
  /** The session a verified session credential names (see `RegistryContext.remoteSession`). */
  callerSessionId?: string;
}): SearchContext {
  return {
    principal: { userId: input.userId, scopes: new Set(input.scopes) },
    organizationId: input.organizationId,
    member: input.orgMembershipId === null ? null : { orgMembershipId: input.orgMembershipId, teamIds: input.teamIds ?? [] },
    remoteSessionsEnabled: input.remoteSessionsEnabled ?? true,
    sourceFilter: input.sourceFilter ?? ALL_SOURCES,
    ...(input.callerSessionId ? { remoteSession: { sessionId: input.callerSessionId } } : {}),
  };
}
