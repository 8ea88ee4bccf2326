import { SESSION_LIMITS } from "@openwork/remote-session-core";
import type { ToolCallSummary } from "@openwork/remote-session-core/internal";
import type { TaskEvent } from "@openwork/runner-protocol/internal";

/** A message of a turn as its events have made it so far. */
export interface FoldedMessage {
  id: string;
  text: string;
  /** Its tool calls in the order first seen, each in its latest state; the latest `toolCallsPerMessage` only. */
  tools: ToolCallSummary[];
  createdAt: string;
}

/** A request of the turn still waiting on the human, as it was asked, with when the gateway heard it. */
export type FoldedRequest = Extract<TaskEvent, { type: "input.requested" }>["payload"] & { askedAt: string };

/**
 * A turn's events folded into what they make: complete messages in the order they completed,
 * messages still being written (deltas joined into their text), tool calls seen before any text,
 * and the requests still waiting on the human. Kept on the task and updated as events are
 * appended, so a read costs the size of the turn's text, not the number of its events.
 */
export interface TaskFold {
  done: FoldedMessage[];
  open: FoldedMessage[];
  unattached: ToolCallSummary[];
  current: string | null;
  asked: FoldedRequest[];
}

export const emptyFold = (): TaskFold => ({ done: [], open: [], unattached: [], current: null, asked: [] });

/** Sets a tool call's latest state, in place when it is known; the oldest go beyond the per-message limit. */
function setTool(tools: ToolCallSummary[], call: ToolCallSummary): void {
  const known = tools.findIndex((t) => t.id === call.id);
  if (known >= 0) tools[known] = call;
  else tools.push(call);
  if (tools.length > SESSION_LIMITS.toolCallsPerMessage) tools.splice(0, tools.length - SESSION_LIMITS.toolCallsPerMessage);
}

/**
 * Folds events (in sequence order, with when the gateway received each) into `fold`, a copy of
 * which is returned. A message completes with its `assistant.final` (whose text replaces the
 * deltas'); tool calls seen before any text belong to the message that follows them.
 */
export function foldEvents(fold: TaskFold, events: { event: TaskEvent; receivedAt: Date }[]): TaskFold {
  const next: TaskFold = structuredClone(fold);
  const draft = (id: string, at: Date): FoldedMessage => {
    const existing = next.open.find((m) => m.id === id);
    if (existing) return existing;
    const created: FoldedMessage = { id, text: "", tools: next.unattached, createdAt: at.toISOString() };
    next.unattached = [];
    next.open.push(created);
    return created;
  };
  for (const { event, receivedAt } of events) {
    if (event.type === "assistant.delta") {
      draft(event.payload.messageId, receivedAt).text += event.payload.text;
      next.current = event.payload.messageId;
    } else if (event.type === "assistant.final") {
      const message = draft(event.payload.messageId, receivedAt);
      message.text = event.payload.text;
      next.open.splice(next.open.indexOf(message), 1);
      next.done.push(message);
      next.current = null;
    } else if (event.type === "tool.call") {
      const { callId, name, status, summary } = event.payload;
      const current = next.current ? draft(next.current, receivedAt) : null;
      setTool(current ? current.tools : next.unattached, { id: callId, name, status, ...(summary ? { summary } : {}) });
    } else if (event.type === "input.requested") {
      next.asked = next.asked.filter((r) => r.requestId !== event.payload.requestId);
      next.asked.push({ ...event.payload, askedAt: receivedAt.toISOString() });
    } else if (event.type === "input.resolved") {
      next.asked = next.asked.filter((r) => r.requestId !== event.payload.requestId);
    }
  }
  return next;
}
