import { SESSION_LIMITS } from "../limits.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import type { SessionState } from "../session-state.js";
import type { ReadResult } from "../target.js";
import { encodeCursor, finalSeenIn } from "./cursor.js";
import { boundText, type TranscriptMessage } from "./transcript-message.js";

/** A target's transcript of a session: complete messages in an order that only ever grows. */
export interface Transcript {
  messages: TranscriptMessage[];
  /** Text of replies still being written (not in `messages` yet). */
  partialText: string | null;
  /** The last assistant message with text of the latest finished turn: its index and whole text. */
  finalAssistant: { index: number; text: string } | null;
  lastError?: { error: string; message: string } | null;
  /**
   * The position of `messages[0]`: a target that loaded only what follows the caller's cursor
   * (`resumePointOf`) holds the messages from there on. Default 0. `finalAssistant.index` counts
   * from the start of the session either way.
   */
  offset?: number;
}

/**
 * Whether the other side wrote something after `position` (a reply, a tool call): what ends a
 * waiting read besides a state change. The caller's own prompt never does.
 */
export function answeredAfter(transcript: Pick<Transcript, "messages" | "offset">, position: number): boolean {
  return transcript.messages.slice(Math.max(0, position - (transcript.offset ?? 0))).some((message) => message.role !== "user");
}

/**
 * Cuts the read slice after `position` (or the last `limit` messages, `from: "end"`) and builds
 * the read result every target returns. The final text is edge-triggered against the caller's
 * cursor, so an old reply is never taken for the new one and a new one is never missed.
 */
export function sliceTranscript(input: {
  session: Pick<LedgerSession, "id" | "title">;
  target: string;
  state: SessionState;
  transcript: Transcript;
  position: number;
  /** The caller's cursor (the one `position` came from), which also says which final reply they were given. */
  cursor?: string | undefined;
  limit: number;
  /** `end` without a cursor (position 0) reads the last `limit` messages. */
  from?: "start" | "end" | undefined;
  webUrl?: string | undefined;
  /**
   * The target's anchor for the message at `index` (the next read's `resumePointOf(...).from`),
   * carried in the returned cursor so that read can load only from there.
   */
  anchorAt?: (index: number) => string | undefined;
}): ReadResult {
  const { transcript, session } = input;
  const offset = transcript.offset ?? 0;
  const length = offset + transcript.messages.length;
  const start = input.from === "end" && input.position === 0 ? Math.max(0, length - input.limit) : Math.min(input.position, length);
  if (start < offset) throw new Error(`sliceTranscript: the read starts at ${start}, before the loaded messages (${offset})`);
  const messages = transcript.messages.slice(start - offset, start - offset + input.limit);
  const next = start + messages.length;
  const hasMore = length > next;
  const final = transcript.finalAssistant;
  // Edge-triggered: each final reply is reported once per reader — with the slice holding its
  // message, or on the first read after its turn ended if the reader had already passed it.
  const seen = input.cursor === undefined ? start - 1 : finalSeenIn(session.id, input.cursor);
  const finalIsNew = final !== null && final.index > seen && final.index < next;
  return {
    sessionId: session.id,
    target: input.target,
    state: input.state,
    title: session.title,
    ...(input.webUrl ? { webUrl: input.webUrl } : {}),
    messages,
    cursor: encodeCursor(session.id, next, finalIsNew ? final.index : seen, input.anchorAt?.(Math.min(next, (finalIsNew ? final.index : seen) + 1))),
    hasMore,
    ...(finalIsNew ? finalTextOf(final.text) : {}),
    ...(!hasMore && transcript.partialText ? { partialText: boundText(transcript.partialText).text } : {}),
    ...(transcript.lastError ? { lastError: transcript.lastError } : {}),
  };
}

/** The final reply as far as a read carries it, and whether it goes on past that. */
function finalTextOf(text: string): { finalAssistantText: string; finalTextTruncated?: true } {
  const bounded = boundText(text, SESSION_LIMITS.finalText);
  return { finalAssistantText: bounded.text, ...(bounded.truncated ? { finalTextTruncated: true as const } : {}) };
}
