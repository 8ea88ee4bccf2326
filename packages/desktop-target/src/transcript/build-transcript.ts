import { boundText, type ToolCallSummary, type Transcript, type TranscriptMessage } from "@openwork/remote-session-core";
import type { TaskEvent } from "@openwork/runner-protocol";
import type { TaskState } from "../task-state.js";

/** What the transcript needs of one task of the session. */
export interface TranscriptTask {
  id: string;
  state: TaskState;
  attempt: number;
  messageId: string | null;
  promptChars: number;
  createdAt: Date;
  /** The runner the task is pinned to, if any, and until when it may be claimed. */
  pinnedRunnerId: string | null;
  claimDeadline: Date;
  /** Its events in (attempt, sequence) order, with when the gateway received each. */
  events: { event: TaskEvent; receivedAt: Date }[];
}


interface Draft {
  id: string;
  text: string;
  tools: Map<string, ToolCallSummary>;
  createdAt: Date;
}

/**
 * Builds a desktop session's transcript from its tasks' events. A message enters the list only
 * once complete (its `assistant.final`, or the end of its turn), and a turn's user marker only
 * once a runner took the turn; since a session's turns run one at a time, the list is
 * append-only, which is what lets a cursor be a plain position that never skips or repeats.
 * Prompt text stays on the desktop: user messages carry no text here.
 *
 * `tasks` may start at a later turn (`loadSessionTasks(..., fromTaskId)`): `offset` is then the
 * position of that turn's first message. `turns` says where each claimed turn's messages start.
 */
export function buildTranscript(tasks: TranscriptTask[], offset = 0): Transcript & { turns: { taskId: string; first: number }[] } {
  const messages: TranscriptMessage[] = [];
  const turns: { taskId: string; first: number }[] = [];
  let partialText: string | null = null;
  let finalAssistant: Transcript["finalAssistant"] = null;
  for (const task of tasks) {
    if (task.attempt === 0) continue;
    turns.push({ taskId: task.id, first: offset + messages.length });
    if (task.promptChars > 0) {
      messages.push({ id: task.messageId ?? task.id, role: "user", text: null, truncated: false, toolCalls: [], createdAt: task.createdAt.toISOString() });
    }
    const open = new Map<string, Draft>();
    let current: string | null = null;
    let lastCompleted: Transcript["finalAssistant"] = null;
    // Tool calls seen before any text belong to the message that follows them.
    let unattached = new Map<string, ToolCallSummary>();
    const draft = (id: string, at: Date) => {
      const existing = open.get(id);
      if (existing) return existing;
      const created: Draft = { id, text: "", tools: unattached, createdAt: at };
      unattached = new Map();
      open.set(id, created);
      return created;
    };
    const complete = (d: Draft) => {
      open.delete(d.id);
      messages.push(toMessage(d));
      if (d.text !== "") lastCompleted = { index: offset + messages.length - 1, text: d.text };
    };
    for (const { event, receivedAt } of task.events) {
      if (event.type === "assistant.delta") {
        draft(event.payload.messageId, receivedAt).text += event.payload.text;
        current = event.payload.messageId;
      } else if (event.type === "assistant.final") {
        const d = draft(event.payload.messageId, receivedAt);
        d.text = event.payload.text;
        complete(d);
        current = null;
      } else if (event.type === "tool.call") {
        const { callId, name, status, summary } = event.payload;
        const tools = current ? draft(current, receivedAt).tools : unattached;
        tools.set(callId, { id: callId, name, status, ...(summary ? { summary } : {}) });
      }
    }
    const finished = task.state !== "queued" && task.state !== "claimed";
    if (finished) {
      if (unattached.size > 0) draft(`${task.id}:tools`, task.createdAt);
      for (const d of [...open.values()]) complete(d);
      if (lastCompleted) finalAssistant = lastCompleted;
    } else if (open.size > 0) partialText = [...open.values()].map((d) => d.text).join("\n\n");
  }
  return { messages, partialText, finalAssistant, offset, turns };
}

function toMessage(draft: Draft): TranscriptMessage {
  const { text, truncated } = boundText(draft.text);
  return {
    id: draft.id,
    role: "assistant",
    text,
    truncated,
    toolCalls: [...draft.tools.values()],
    createdAt: draft.createdAt.toISOString(),
  };
}
