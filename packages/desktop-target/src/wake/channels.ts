/** NOTIFY channel of wake-up hints: `{ w, o, m, r, t }` (wake id, org, member, runner or null, task). */
export const WAKE_CHANNEL = "openwork_desktop_wake";

/** NOTIFY channel of session changes (new events, state): the session id, nothing else. */
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
