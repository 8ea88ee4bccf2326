import { createHash } from "node:crypto";
import { fail } from "../errors/session-error.js";

/**
 * Opaque transcript cursors. A cursor names a position in one session's ordered message list
 * (how many messages the caller has seen) and is bound to that session, so a cursor of another
 * session is refused instead of silently reading the wrong place.
 */
export function encodeCursor(sessionId: string, position: number, finalSeen?: number, anchor?: string): string {
  return Buffer.from(
    JSON.stringify({ v: 1, s: sessionTag(sessionId), p: position, ...(finalSeen === undefined ? {} : { f: finalSeen }), ...(anchor === undefined ? {} : { a: anchor }) }),
  ).toString("base64url");
}

/**
 * Where the next read after `cursor` may need messages from — its position, or an earlier final
 * reply it has not been given yet — and the anchor the target put in the cursor for that message
 * (`sliceTranscript`'s `anchorAt`), which lets the target load only what follows it.
 */
export function resumePointOf(sessionId: string, cursor: string | undefined): { from: number; anchor?: string } {
  if (cursor === undefined) return { from: 0 };
  const { position, finalSeen, anchor } = parseCursor(sessionId, cursor);
  return { from: Math.max(0, Math.min(position, finalSeen + 1)), ...(anchor === undefined ? {} : { anchor }) };
}

/**
 * The index of the last final reply the cursor's holder was given (-1: none), so a reply that
 * became final only after they read past its message is still reported to them, once.
 */
export function finalSeenIn(sessionId: string, cursor: string | undefined): number {
  return cursor === undefined ? -1 : parseCursor(sessionId, cursor).finalSeen;
}

/** The position of `cursor` (0 for none). Throws `invalid_capability_arguments` when it is not ours. */
export function decodeCursor(sessionId: string, cursor: string | undefined): number {
  return cursor === undefined ? 0 : parseCursor(sessionId, cursor).position;
}

/** One cursor of this session, read once; anything else is refused. */
function parseCursor(sessionId: string, cursor: string): { position: number; finalSeen: number; anchor?: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; s?: unknown; p?: unknown; f?: unknown; a?: unknown };
    if (value.v === 1 && value.s === sessionTag(sessionId) && Number.isSafeInteger(value.p) && (value.p as number) >= 0) {
      const position = value.p as number;
      return {
        position,
        finalSeen: Number.isSafeInteger(value.f) ? (value.f as number) : position - 1,
        ...(typeof value.a === "string" ? { anchor: value.a } : {}),
      };
    }
  } catch {
    // fall through to the refusal
  }
  return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
}

/** What a relay cursor holds: the other party's own cursor, and a request still being answered. */
export interface RelayPosition {
  /** The other party's cursor (an OpenWork desktop's message id); null reads from the start. */
  theirs: string | null;
  /** A relayed read not answered when the cursor was handed out: the next read takes its answer. */
  pending?: string;
}

/** A cursor that carries another party's position (see `RelayPosition`), bound to the session like every cursor. */
export function encodeRelayCursor(sessionId: string, position: RelayPosition): string {
  return Buffer.from(JSON.stringify({ v: "relay", s: sessionTag(sessionId), c: position.theirs, ...(position.pending ? { r: position.pending } : {}) })).toString("base64url");
}

/** The position in a relay cursor (from the start without one). Throws `invalid_capability_arguments` when it is not ours. */
export function decodeRelayCursor(sessionId: string, cursor: string | undefined): RelayPosition {
  if (cursor === undefined) return { theirs: null };
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; s?: unknown; c?: unknown; r?: unknown };
    if (value.v === "relay" && value.s === sessionTag(sessionId) && (value.c === null || typeof value.c === "string")) {
      return { theirs: value.c as string | null, ...(typeof value.r === "string" ? { pending: value.r } : {}) };
    }
  } catch {
    // fall through to the refusal
  }
  return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
}

/**
 * What a reader was shown besides messages — the session's state and the request waiting on the
 * human — as a short digest a cursor carries (`withObservation`), so a read that waits returns on
 * a change after the caller's cursor, never on a state that was already there when they last read.
 */
export function observationOf(view: { state: string; pending?: { id: string } | undefined }): string {
  return createHash("sha256").update(`${view.state}\0${view.pending?.id ?? ""}`).digest("base64url").slice(0, 8);
}

/** The members of one of this session's cursors (either kind), or null when it is not one. */
function membersOf(sessionId: string, cursor: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Record<string, unknown> | null;
    return value !== null && typeof value === "object" && value.s === sessionTag(sessionId) ? value : null;
  } catch {
    return null;
  }
}

/** The observation `cursor` carries; undefined without one (or for a cursor that is not ours: the target refuses it). */
export function observedIn(sessionId: string, cursor: string | undefined): string | undefined {
  const observed = cursor === undefined ? undefined : membersOf(sessionId, cursor)?.o;
  return typeof observed === "string" ? observed : undefined;
}

/** `cursor` carrying `observation`, every other member as its target wrote it (targets ignore `o`). */
export function withObservation(sessionId: string, cursor: string, observation: string): string {
  const members = membersOf(sessionId, cursor);
  return members === null ? cursor : Buffer.from(JSON.stringify({ ...members, o: observation })).toString("base64url");
}

function sessionTag(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("base64url").slice(0, 10);
}
