import { decodeTargetCursor, encodeTargetCursor } from "@openwork/remote-session-core/target";
import { fail } from "../../desktop-errors.js";

/** What a relay cursor holds: the other party's own cursor, and a request still being answered. */
export interface RelayPosition {
  /** The other party's cursor (an OpenWork desktop's message id); null reads from the start. */
  theirs: string | null;
  /** A relayed read not answered when the cursor was handed out: the next read takes its answer. */
  pending?: string;
}

// The kind and members of cursors handed out before they were the desktop's own: still read.
const KIND = "relay";

/** A cursor that carries another party's position (see `RelayPosition`), bound to the session like every cursor. */
export function encodeRelayCursor(sessionId: string, position: RelayPosition): string {
  return encodeTargetCursor(sessionId, KIND, { c: position.theirs, ...(position.pending ? { r: position.pending } : {}) });
}

/** The position in a relay cursor (from the start without one). Throws `invalid_capability_arguments` when it is not ours. */
export function decodeRelayCursor(sessionId: string, cursor: string | undefined): RelayPosition {
  if (cursor === undefined) return { theirs: null };
  const { c, r } = decodeTargetCursor(sessionId, KIND, cursor);
  // A cursor of this session whose position is not a string cannot be ours: refused like a foreign one.
  if (c !== null && typeof c !== "string")
    return fail("invalid_capability_arguments", "cursor is not a cursor of this session; pass the cursor a read returned");
  return { theirs: c, ...(typeof r === "string" ? { pending: r } : {}) };
}
