import { createHash } from "node:crypto";
import { errorFacts, type Logger } from "@openwork/remote-session-core";
import type { PushAuth, PushBus } from "./push-bus.js";

/**
 * A session read as the caller: the capability's `read` payload, null when the caller may not
 * read it (unknown, another member's), or a rejection when the target cannot answer now.
 */
export type ReadAs = (
  auth: PushAuth,
  body: { sessionId: string; cursor?: string; waitMs?: number },
  signal?: AbortSignal,
) => Promise<Record<string, unknown> | null>;

// A watcher looks again at least this often, whatever the target tells it.
const WATCH_TIMEOUT_MS = 25_000;
// States in which a read with waitMs waits (for targets without a change feed here).
const WAITABLE = new Set(["queued", "running", "waiting_input"]);

/**
 * What `notifications/resources/updated` is sent for: a slice's state, position, the text being
 * written, the reply, what it asks, its error. Anything else (its `next`, clocks) is not a change.
 * It is also the session's version a 2026-era listener resumes from.
 */
export function fingerprintOf(slice: Record<string, unknown>): string {
  const pending = slice.pending as { id?: string; overdue?: boolean } | undefined;
  const facts = [
    slice.state,
    slice.cursor,
    slice.partialText,
    slice.finalAssistantText,
    pending?.id,
    pending?.overdue,
    slice.lastError,
    slice.retrying,
    slice.deferred,
  ];
  return createHash("sha256").update(JSON.stringify(facts)).digest("base64url");
}

export interface WatchParts {
  /** Reads the session as the watcher's caller (a hub shares one read among the watchers woken together). */
  look(auth: PushAuth, sessionId: string): Promise<Record<string, unknown> | null>;
  /** The capability's read, for the waiting read that watches targets with no change feed here. */
  read: ReadAs;
  /** Resolves when the session may have changed: hints from every replica, on the host's wake hub. */
  bus: Pick<PushBus, "waitForSession">;
  logger: Logger;
}

/**
 * Watches one session as `auth` until `signal` aborts or the caller may no longer read it
 * (resolves then): `changed(version)` runs once per version unlike the one before, starting from
 * `since` (null: the first look sets where it starts, telling nothing). A look that fails (a waking worker) is retried at
 * the next hint or timeout.
 */
export async function watchSession(
  parts: WatchParts,
  watched: { auth: PushAuth; sessionId: string; since: string | null },
  changed: (version: string) => unknown,
  signal: AbortSignal,
): Promise<void> {
  const { auth, sessionId } = watched;
  let announced = watched.since;
  while (!signal.aborted) {
    // Listen before looking, so a change between the look and the wait is not missed.
    const woken = parts.bus.waitForSession(sessionId, WATCH_TIMEOUT_MS, signal);
    const slice = await parts.look(auth, sessionId).catch((error: unknown) => {
      parts.logger.warn("push: a watched session could not be read", { sessionId, error: errorFacts(error) });
      return undefined;
    });
    if (slice === null) return;
    if (slice === undefined) {
      await woken;
      continue;
    }
    const version = fingerprintOf(slice);
    if (announced === null) announced = version;
    else if (version !== announced && !signal.aborted) {
      await changed(version);
      announced = version;
    }
    // Targets whose changes are not notified here (the cloud) are watched with a waiting read,
    // which ends with the watcher; one refused (the member's waiting reads are all taken) waits for the change.
    const waits = slice.target !== "desktop" && WAITABLE.has(String(slice.state));
    const waited = () => parts.read(auth, { sessionId, cursor: String(slice.cursor), waitMs: WATCH_TIMEOUT_MS }, signal).catch(() => woken);
    await (waits ? Promise.race([woken, waited()]) : woken);
  }
}
