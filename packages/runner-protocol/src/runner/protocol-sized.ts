import { LIMITS } from "../v1/limits.js";
import type { TaskEventInput } from "../v1/task-events.js";

/** Cuts text into pieces of at most `max` characters, never between the two halves of a surrogate pair. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + max);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/**
 * One event as the protocol's limits allow it: a long delta becomes several deltas; a final
 * longer than a message may be keeps its first LIMITS.finalText characters and says so in a
 * warning. The engine never has to know the limits.
 */
export function protocolSized(event: TaskEventInput): TaskEventInput[] {
  if (event.type === "assistant.delta" && event.payload.text.length > LIMITS.deltaText) {
    return splitText(event.payload.text, LIMITS.deltaText).map((text) => ({ ...event, payload: { ...event.payload, text } }));
  }
  if (event.type === "assistant.final" && event.payload.text.length > LIMITS.finalText) {
    const [kept = ""] = splitText(event.payload.text, LIMITS.finalText);
    return [
      { ...event, payload: { ...event.payload, text: kept } },
      { type: "warning", payload: { code: "reply_truncated", message: `the reply was cut to its first ${kept.length} characters` } },
    ];
  }
  return [event];
}
