/** The one state vocabulary of a remote session, whatever its target. */
export const SESSION_STATES = [
  /** A desktop task not yet claimed by a runner. */
  "queued",
  /** The cloud worker is starting. */
  "waking",
  /** A turn is in progress. */
  "running",
  /** Ready for a prompt. */
  "idle",
  /** The session asks the human something (a permission, a question). */
  "waiting_input",
  /** The desktop lease was lost mid-turn; the events posted before are kept. */
  "interrupted",
  /** Not delivered by its deadline. */
  "expired",
  "failed",
  "stopped",
] as const;

export type SessionState = (typeof SESSION_STATES)[number];

/**
 * Which state may follow which. Targets move sessions only along these edges, and the ledger's
 * SQL update checks the same table (`where state = any(...)`), so the database enforces it too.
 * A follow-up prompt revives an idle, stopped, failed or interrupted session; an expired one
 * never had a local session and stays expired.
 */
export const SESSION_TRANSITIONS = {
  queued: ["queued", "running", "waiting_input", "idle", "interrupted", "expired", "failed", "stopped"],
  waking: ["waking", "running", "idle", "failed", "stopped"],
  // running → queued: the turn ended while a follow-up waits for its desktop.
  running: ["running", "queued", "waiting_input", "idle", "interrupted", "failed", "stopped"],
  idle: ["idle", "queued", "waking", "running", "waiting_input", "failed", "stopped"],
  waiting_input: ["waiting_input", "queued", "running", "idle", "interrupted", "failed", "stopped"],
  // interrupted → idle / waiting_input / failed: a desktop that was lost (no lease: an OpenWork
  // desktop unseen for 10 minutes) comes back and reports where its turn ended.
  interrupted: ["interrupted", "queued", "waking", "running", "idle", "waiting_input", "failed", "stopped"],
  expired: ["expired"],
  failed: ["failed", "queued", "waking", "running", "stopped"],
  stopped: ["stopped", "queued", "waking", "running"],
} as const satisfies Record<SessionState, readonly SessionState[]>;

/** The states from which `to` may be reached. */
export function statesLeadingTo(to: SessionState): SessionState[] {
  return SESSION_STATES.filter((from) => (SESSION_TRANSITIONS[from] as readonly SessionState[]).includes(to));
}

export function canTransition(from: SessionState, to: SessionState): boolean {
  return (SESSION_TRANSITIONS[from] as readonly SessionState[]).includes(to);
}

/** States in which the session accepts a new prompt. */
export function acceptsPrompt(state: SessionState): boolean {
  return canTransition(state, "running") || canTransition(state, "queued");
}
