import type { TranscriptMessage } from "@openwork/remote-session-core";
import type { ToolCallSummary } from "@openwork/remote-session-core/internal";
import { boundText, type Transcript } from "@openwork/remote-session-core/target";
import type { MessageWithParts } from "@openwork/opencode-client/internal";

/** A worker session's transcript, plus whether its latest turn is over. */
export interface CloudTranscript extends Transcript {
  /** Whether the latest turn is over (see `turnIsOver`). */
  turnOver: boolean;
  /** The error that ended the latest turn, if one did. */
  lastError: { error: string; message: string } | null;
  /** Whether the latest turn was stopped (aborted) rather than finished. */
  aborted: boolean;
  /** The latest prompt's message id and when the worker stored it (epoch ms). */
  lastUser: { id: string; createdAt: number } | null;
  /**
   * The latest reply stopped at a failed tool call and nothing followed: what a refused
   * permission does (the engine ends the turn there). Over once the worker is idle.
   */
  haltedOnTool: boolean;
}

const TOOL_STATUS: Record<string, ToolCallSummary["status"]> = {
  pending: "pending",
  running: "running",
  completed: "completed",
  error: "error",
};

/** What the gateway knows beside the message list. */
export interface TranscriptContext {
  /** Text of replies still being written, by message id, as the event stream delivered it. */
  liveText?: ReadonlyMap<string, string> | undefined;
  /** Messages whose live text was heard from the middle: their start is not known here. */
  liveTextPartial?: ReadonlySet<string> | undefined;
  /** The worker is idle on this session (seen before and after the messages were fetched). */
  workerIdle?: boolean | undefined;
}

/** The code of a reply the engine will never finish (it was killed or restarted mid-reply). */
export const INTERRUPTED = "turn_interrupted";
const INTERRUPTED_WORDS = "the cloud worker's engine stopped while writing this reply; it was never finished";
/** Put before live text whose start was written before this gateway listened: never a tail as the whole. */
export const START_MISSING =
  "[the start of this reply is missing here: it was written before this gateway began listening; the whole text comes when the reply ends] …";

/**
 * Turns a worker session's messages into a transcript. opencode keeps messages in id order and
 * only appends, so the complete messages up to the first incomplete one form a list that only
 * grows: a cursor can be a position in it. A user message queued behind a running reply stays
 * out until that reply completes, or the order would change under the reader. A reply the engine
 * abandoned (killed mid-reply, it stays incomplete forever) counts as ended, interrupted, once a
 * later reply exists or the worker is idle: it never hides what follows it.
 */
export function buildCloudTranscript(listed: MessageWithParts[], context: TranscriptContext = {}): CloudTranscript {
  const raw = endAbandoned(listed, context);
  const messages: TranscriptMessage[] = [];
  let index = 0;
  for (; index < raw.length && isComplete(raw[index]!); index++) messages.push(toMessage(raw[index]!));
  // A reply being written keeps an empty text part until it ends: its text so far exists only
  // as events, which the caller passes in.
  const partial = raw
    .slice(index)
    .filter((m) => m.info.role === "assistant")
    .map((m) => knownText(m, context))
    .filter((text) => text !== "")
    .join("\n\n");

  const lastUser = raw.findLastIndex((m) => m.info.role === "user");
  const replies = raw.slice(lastUser + 1).filter((m) => m.info.role === "assistant");
  const turnOver = lastUser === -1 || turnIsOver(replies);
  const failed = replies.findLast((m) => m.info.error);
  const aborted = turnOver && replies.some(wasAborted);
  const latest = replies.at(-1);
  const haltedOnTool =
    latest?.info.time.completed !== undefined &&
    latest.info.finish === "tool-calls" &&
    latest.parts.some((p) => p.type === "tool" && p.state?.status === "error");
  let finalAssistant: CloudTranscript["finalAssistant"] = null;
  if (turnOver && lastUser !== -1) {
    for (let i = messages.length - 1; i > lastUser; i--) {
      const text = textOf(raw[i]!);
      if (raw[i]!.info.role === "assistant" && text !== "") {
        finalAssistant = { index: i, text };
        break;
      }
    }
  }
  return {
    messages,
    partialText: partial === "" ? null : partial,
    finalAssistant,
    turnOver,
    lastError: failed?.info.error ? { error: failed.info.error.name, message: describeEngineError(failed.info.error) } : null,
    aborted,
    lastUser: lastUser === -1 ? null : { id: raw[lastUser]!.info.id, createdAt: raw[lastUser]!.info.time.created },
    haltedOnTool,
  };
}

// opencode's errors that carry no message of their own, in words a person reads.
const ENGINE_ERROR_WORDS: Record<string, string> = {
  MessageAbortedError: "the turn was stopped before it finished",
  MessageOutputLengthError: "the reply was cut off: the model reached its output limit",
  ProviderAuthError: "the model provider refused the worker's credentials",
};

/** The engine's own message when it has one, else words for its error's name; the code stays beside it. */
function describeEngineError(error: { name: string; data?: { message?: string | undefined } | undefined }): string {
  return error.data?.message || ENGINE_ERROR_WORDS[error.name] || `the turn failed (${error.name})`;
}

/**
 * A turn is over only when an assistant reply newer than the prompt has completed with a finish
 * other than `tool-calls` (more replies follow those), or has failed. Status alone is not
 * enough: right after `prompt_async` a fresh worker may not list the session as busy yet.
 */
export function turnIsOver(replies: MessageWithParts[]): boolean {
  return replies.some((m) => m.info.error !== undefined || (m.info.time.completed !== undefined && m.info.finish !== "tool-calls"));
}

/**
 * Aborted: marked so, or — a turn aborted while its provider was being retried — completed with
 * neither a finish nor an error (a reply that ends normally always has a finish).
 */
function wasAborted(message: MessageWithParts): boolean {
  const { info } = message;
  return info.error?.name === "MessageAbortedError" || (info.time.completed !== undefined && info.finish === undefined && info.error === undefined);
}

/**
 * Marks the replies the engine will never finish: incomplete, with a later reply after them (the
 * engine writes one reply at a time) or an idle worker. A later prompt alone proves nothing: a
 * prompt sent during a reply is stored at once and waits. Each keeps the text known so far.
 */
function endAbandoned(raw: MessageWithParts[], context: TranscriptContext): MessageWithParts[] {
  const lastReply = raw.findLastIndex((m) => m.info.role === "assistant");
  return raw.map((message, i) => {
    if (isComplete(message) || (i === lastReply && context.workerIdle !== true)) return message;
    const known = knownText(message, context);
    return {
      info: { ...message.info, error: { name: INTERRUPTED, data: { message: INTERRUPTED_WORDS } } },
      parts: [...message.parts.filter((p) => p.type !== "text"), { type: "text", text: `${known}${known ? "\n\n" : ""}[interrupted: ${INTERRUPTED_WORDS}]` }],
    };
  });
}

/** A reply's text as far as it is known here: from the list, else live, marked when its start was not heard. */
function knownText(message: MessageWithParts, context: TranscriptContext): string {
  const listed = textOf(message);
  if (listed !== "") return listed;
  const live = context.liveText?.get(message.info.id) ?? "";
  return live !== "" && context.liveTextPartial?.has(message.info.id) ? `${START_MISSING}${live}` : live;
}

function isComplete(message: MessageWithParts): boolean {
  return message.info.role === "user" || message.info.time.completed !== undefined || message.info.error !== undefined;
}

function textOf(message: MessageWithParts): string {
  return message.parts
    .filter((p) => p.type === "text" && !p.synthetic)
    .map((p) => p.text ?? "")
    .join("");
}

function toMessage(message: MessageWithParts): TranscriptMessage {
  const { text, truncated } = boundText(textOf(message));
  const toolCalls = message.parts
    .filter((p) => p.type === "tool")
    .map((p) => ({
      id: p.callID ?? p.id ?? "tool",
      name: p.tool ?? "tool",
      status: TOOL_STATUS[p.state?.status ?? ""] ?? "pending",
      ...(summaryOf(p) ? { summary: summaryOf(p)!.slice(0, 2_000) } : {}),
    }));
  return {
    id: message.info.id,
    role: message.info.role,
    text,
    truncated,
    toolCalls,
    createdAt: new Date(message.info.time.created).toISOString(),
  };
}

/** A tool call in one line: its title, or why it failed (a refused permission's sentence). */
function summaryOf(part: MessageWithParts["parts"][number]): string | undefined {
  return part.state?.status === "error" ? (part.state.error ?? part.state.title) : part.state?.title;
}
