/** The scopes the source checks. */
export interface RemoteSessionPolicy {
  /**
   * A scope that gates the whole source (search shows nothing without it, execute refuses).
   * Default none: den-api's tokens carry only `mcp:read`, `mcp:write` and `offline_access`.
   */
  gateScope?: string;
  /** Needed for create, send and stop. Default `mcp:write`, as in den-api. */
  writeScope: string;
}

export const DEFAULT_POLICY: RemoteSessionPolicy = { writeScope: "mcp:write" };
