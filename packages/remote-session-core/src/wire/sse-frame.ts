import { SseFieldError } from "./sse-field-error.js";

/** One message of a `text/event-stream`. */
export interface SseMessage {
  /** Becomes the reader's last event id (sent back as `Last-Event-ID` on reconnect); `""` resets it. */
  id?: string;
  /** The event type; a reader takes a frame without one as `message`. */
  event?: string;
  /** Any text: each of its lines becomes its own `data:` line, and the reader joins them back with `\n`. */
  data: string;
  /** How long, in ms, the reader waits before it reconnects. */
  retry?: number;
}

const LINE_BREAK = /[\r\n]/;
// The stream's grammar ends a line at CRLF, a lone CR or a lone LF.
const DATA_LINES = /\r\n|\r|\n/;

/**
 * The bytes of one SSE message, fields in the order `id`, `event`, `retry`, `data`, ended by a
 * blank line. Throws {@link SseFieldError} rather than write a field a reader would split.
 */
export function sseFrame(message: SseMessage): string {
  let frame = "";
  if (message.id !== undefined) frame += `id: ${field("id", message.id)}\n`;
  if (message.event !== undefined) frame += `event: ${field("event", message.event)}\n`;
  if (message.retry !== undefined) frame += `retry: ${retryOf(message.retry)}\n`;
  for (const line of message.data.split(DATA_LINES)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** A comment line (`: text`), which readers skip: a keepalive, or the first bytes of a stream. */
export function sseComment(text: string): string {
  return `: ${field("comment", text)}\n\n`;
}

function field(name: "id" | "event" | "comment", value: string): string {
  if (LINE_BREAK.test(value)) throw new SseFieldError(name, "must not contain CR or LF");
  if (name === "id" && value.includes("\0")) throw new SseFieldError(name, "must not contain NUL");
  return value;
}

function retryOf(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new SseFieldError("retry", `must be a non-negative integer, got ${ms}`);
  return ms;
}
