import { SESSION_LIMITS } from "../limits.js";

/** A tool call as a transcript shows it. */
export interface ToolCallSummary {
  id: string;
  name: string;
  status: "pending" | "running" | "completed" | "error";
  summary?: string;
}

/** One message of a transcript slice. */
export interface TranscriptMessage {
  id: string;
  role: "user" | "assistant";
  /** The text, cut to the per-message bound. Null where the text stays on the target. */
  text: string | null;
  truncated: boolean;
  toolCalls: ToolCallSummary[];
  createdAt: string;
}

/** Cuts text to `limit` characters without splitting a surrogate pair. */
export function boundText(text: string, limit: number = SESSION_LIMITS.messageText): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}
