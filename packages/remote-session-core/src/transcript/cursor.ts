import { createHash } from "node:crypto";
import { fail } from "../errors/session-error.js";

/**
 * Opaque transcript cursors. A cursor names a position in one session's ordered message list
 * (how many messages the caller has seen) and is bound to that session, so a cursor of another
 * session is refused instead of silently reading the wrong place.
 */
export function encodeCursor(sessionId: string, position: number, finalSeen?: number, anchor?: string): string {
  return Buffer.from(
    JSON.stringify({
      v: 1,
      s: sessionTag(sessionId),
      p: position,
      ...(finalSeen === undefined ? {} : { f: finalSeen }),
      ...(anchor === undefined ? {} : { a: anchor }),
    }),
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

// Members every cursor carries whoever wrote it: its kind, its session, the core's observation.
const CURSOR_MEMBERS = new Set(["v", "s", "o"]);

/**
 * A cursor whose contents are the target's own (a target that relays another party's paging puts
 * that party's position in it), bound to the session like every cursor. `kind` tells it apart
 * from the core's cursors and the target's other kinds; `members` may not use `v`, `s` or `o`.
 */
export function encodeTargetCursor(sessionId: string, kind: string, members: Record<string, string | number | boolean | null>): string {
  const taken = Object.keys(members).filter((name) => CURSOR_MEMBERS.has(name));
  if (taken.length > 0) throw new Error(`cursor members ${taken.join(", ")} are every cursor's own`);
  return Buffer.from(JSON.stringify({ v: kind, s: sessionTag(sessionId), ...members })).toString("base64url");
}

/**
 * The target's members of one of its cursors of `kind` for this session (the core's `o` left
 * out). Throws `invalid_capability_arguments` when the cursor is not one.
 */
export function decodeTargetCursor(sessionId: string, kind: string, cursor: string): Record<string, unknown> {
  const members = membersOf(sessionId, cursor);
  if (members?.v === kind) return Object.fromEntries(Object.entries(members).filter(([name]) => !CURSOR_MEMBERS.has(name)));
  return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
}

/**
 * What a reader was shown besides messages — the session's state and the request waiting on the
 * human — as a short digest a cursor carries (`withObservation`), so a read that waits returns on
 * a change after the caller's cursor, never on a state that was already there when they last read.
 */
export function observationOf(view: { state: string; pending?: { id: string } | undefined }): string {
  return createHash("sha256")
    .update(`${view.state}\0${view.pending?.id ?? ""}`)
    .digest("base64url")
    .slice(0, 8);
}

/** The members of one of this session's cursors (the core's or a target's), or null when it is not one. */
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
