import { createHash } from "node:crypto";
import { fail } from "../errors/session-error.js";

/**
 * Opaque transcript cursors. A cursor names a position in one session's ordered message list
 * (how many messages the caller has seen) and is bound to that session, so a cursor of another
 * session is refused instead of silently reading the wrong place.
 */
export function encodeCursor(sessionId: string, position: number, finalSeen?: number): string {
  return Buffer.from(JSON.stringify({ v: 1, s: sessionTag(sessionId), p: position, ...(finalSeen === undefined ? {} : { f: finalSeen }) })).toString("base64url");
}

/**
 * The index of the last final reply the cursor's holder was given (-1: none), so a reply that
 * became final only after they read past its message is still reported to them, once.
 */
export function finalSeenIn(sessionId: string, cursor: string | undefined): number {
  if (cursor === undefined) return -1;
  const position = decodeCursor(sessionId, cursor);
  const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { f?: unknown };
  return Number.isSafeInteger(value.f) ? (value.f as number) : position - 1;
}

/** The position of `cursor` (0 for none). Throws `invalid_capability_arguments` when it is not ours. */
export function decodeCursor(sessionId: string, cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; s?: unknown; p?: unknown };
    if (value.v === 1 && value.s === sessionTag(sessionId) && Number.isSafeInteger(value.p) && (value.p as number) >= 0) {
      return value.p as number;
    }
  } catch {
    // fall through to the refusal
  }
  return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
}

/**
 * A cursor that carries another party's own cursor (an OpenWork desktop's message id), bound to
 * the session like every cursor. `null` reads from the start.
 */
export function encodeRelayCursor(sessionId: string, theirs: string | null): string {
  return Buffer.from(JSON.stringify({ v: "relay", s: sessionTag(sessionId), c: theirs })).toString("base64url");
}

/** The other party's cursor in `cursor` (null: from the start). Throws `invalid_capability_arguments` when it is not ours. */
export function decodeRelayCursor(sessionId: string, cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { v?: unknown; s?: unknown; c?: unknown };
    if (value.v === "relay" && value.s === sessionTag(sessionId) && (value.c === null || typeof value.c === "string")) return value.c as string | null;
  } catch {
    // fall through to the refusal
  }
  return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
}

function sessionTag(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("base64url").slice(0, 10);
}
