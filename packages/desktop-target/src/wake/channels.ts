/**
 * NOTIFY channel of wake-up hints: a JSON array of `{ w, o, m, r, t }` (wake id, org, member,
 * runner or null, task), sent after the commit, coalesced; a single object is read too.
 */
export const WAKE_CHANNEL = "openwork_desktop_wake";

/** NOTIFY channel of session changes (new events, state): session ids joined with commas, nothing else. */
export const SESSION_CHANNEL = "openwork_desktop_session";

export interface WakeNotice {
  /** desktop_wake.id: the SSE event id and `Last-Event-ID` cursor. */
  w: number;
  o: string;
  m: string;
  /** Only this runner should wake; null: any runner of the member. */
  r: string | null;
  t: string;
}

/**
 * NOTIFY channel of push hints (MCP sessions' streams, a host's push package): `<mcpSessionId>:<kind>`
 * entries joined with commas.
 */
export const PUSH_CHANNEL = "openwork_push";

/**
 * NOTIFY channel of revoke hints: a JSON array of `{ o, m, r }` (org, member, runner), sent after
 * the revocation committed, so every process forgets the runner's cached registration at once.
 */
export const REVOKE_CHANNEL = "openwork_desktop_revoke";
