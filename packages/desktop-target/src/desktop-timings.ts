/**
 * Every timing of the desktop channel in one place. `createDesktopChannel` resolves them once
 * and hands the same values to the target, the runner routes and the sweeper, so one setting
 * (say the presence window) changes all of them; each piece built alone defaults to these too.
 */
export interface DesktopTimings {
  /**
   * A desktop seen within this window is online (availability, presence, the runner list); an
   * OpenWork desktop (which holds no lease) unseen this long mid-turn has lost its turn. Default
   * 10 min, OpenWork's value.
   */
  presenceWindowMs: number;
  /** Lease granted by a claim or heartbeat. Default 30 s. */
  leaseMs: number;
  /** Heartbeat interval the runner is told. Default 10 s. */
  heartbeatIntervalMs: number;
  /** Keepalive interval of the runners' SSE stream. Default 15 s. */
  keepaliveMs: number;
  /**
   * How often a process writes the presence of the desktops whose streams it holds, in one
   * statement for all of them, and checks them for revocations whose hint was lost (a stream's
   * revocation bound). Default 30 s, or a quarter of `presenceWindowMs` when that is shorter;
   * less than `presenceWindowMs`. A process that dies stops writing: its desktops go offline one
   * presence window after its last flush.
   */
  presenceFlushMs: number;
  /** How often an open stream re-checks membership. Default 15 s. */
  membershipCheckMs: number;
  /** How long a task without `deliverBy` waits for its desktop before it expires. Default 10 min. */
  claimDeadlineMs: number;
  /** How long a read or stop of a session on an OpenWork desktop waits for its answer. Default 20 s. */
  relayWaitMs: number;
  /** Pause between sweeps. Default 2 s: with a 30 s lease, a lost runner is `interrupted` within 32 s. */
  sweepIntervalMs: number;
  /**
   * How long a process serves a runner's registration (registered, not revoked since its token's
   * mint, its protocol and capabilities) from memory before it reads it again: the runner routes
   * skip that round trip for the requests in between. This is the staleness bound of a revocation
   * whose wake-bus hint is lost: every process refuses the revoked runner's tokens at most this
   * long after the revocation committed (the revoking process at once, the others as soon as the
   * hint arrives). Default 1 s, at most 1 s (a larger value is refused); 0 turns the cache off.
   * A completion always checks the registration in its own transaction.
   */
  registrationCacheMs: number;
}

export const DEFAULT_DESKTOP_TIMINGS: Readonly<DesktopTimings> = Object.freeze({
  presenceWindowMs: 10 * 60_000,
  leaseMs: 30_000,
  heartbeatIntervalMs: 10_000,
  keepaliveMs: 15_000,
  presenceFlushMs: 30_000,
  membershipCheckMs: 15_000,
  claimDeadlineMs: 10 * 60_000,
  relayWaitMs: 20_000,
  sweepIntervalMs: 2_000,
  registrationCacheMs: 1_000,
});

/** The revocation staleness bound `registrationCacheMs` may not exceed. */
export const MAX_REGISTRATION_CACHE_MS = 1_000;

/**
 * The timings given, the defaults for the rest; a value that is not a positive number is refused,
 * except `registrationCacheMs`: 0 (off) to `MAX_REGISTRATION_CACHE_MS`.
 */
export function resolveTimings(given: Partial<DesktopTimings> = {}): DesktopTimings {
  const timings = { ...DEFAULT_DESKTOP_TIMINGS };
  for (const [key, value] of Object.entries(given) as [keyof DesktopTimings, number | undefined][]) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_DESKTOP_TIMINGS)) throw new TypeError(`desktop timings: unknown timing ${key}`);
    if (key === "registrationCacheMs") checkRegistrationCacheMs(value);
    else if (!Number.isFinite(value) || value <= 0) throw new TypeError(`desktop timings: ${key} must be a positive number of milliseconds`);
    timings[key] = value;
  }
  if (given.presenceFlushMs === undefined) timings.presenceFlushMs = Math.min(DEFAULT_DESKTOP_TIMINGS.presenceFlushMs, timings.presenceWindowMs / 4);
  else if (timings.presenceFlushMs >= timings.presenceWindowMs) {
    throw new TypeError("desktop timings: presenceFlushMs must be less than presenceWindowMs: a desktop would go offline between two flushes");
  }
  return timings;
}

function checkRegistrationCacheMs(value: number): void {
  if (!Number.isFinite(value) || value < 0 || value > MAX_REGISTRATION_CACHE_MS) {
    throw new TypeError(
      `desktop timings: registrationCacheMs must be 0 (off) to ${MAX_REGISTRATION_CACHE_MS} ms: it bounds how long a revoked runner is still served`,
    );
  }
}

/** A window in words, for messages: whole minutes when it is some, else seconds. */
export function describeWindow(ms: number): string {
  const minutes = ms / 60_000;
  if (Number.isInteger(minutes)) return minutes === 1 ? "1 minute" : `${minutes} minutes`;
  const seconds = Math.round(ms / 1000);
  return seconds === 1 ? "1 second" : `${seconds} seconds`;
}
