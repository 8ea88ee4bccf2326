import type { SeenRunnerRow } from "./store/runner-row.js";

/** A desktop runner as `list` and `targets` show it. */
export type RunnerPresence = {
  runnerId: string;
  name: string;
  /** `darwin`, `win32`, `linux`; null for a desktop known only from its token (never registered here). */
  platform: string | null;
  online: boolean;
  lastSeenAt: string | null;
};

/** Presence per machine, most recently seen first. */
export function presenceOf(runners: SeenRunnerRow[], windowMs: number, now: number = Date.now()): RunnerPresence[] {
  return runners.map((runner) => ({
    runnerId: runner.runner_id,
    name: runner.name,
    platform: runner.platform,
    // Seen lately, and its wake stream (if it had one) not closed since.
    online: now - runner.seen_at.getTime() <= windowMs && !(runner.disconnected_at && runner.disconnected_at >= runner.seen_at),
    lastSeenAt: runner.seen_at.toISOString(),
  }));
}
