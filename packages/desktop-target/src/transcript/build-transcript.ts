import type { TranscriptMessage } from "@openwork/remote-session-core";
import { boundText, type Transcript } from "@openwork/remote-session-core/target";
import type { TaskState } from "../task-state.js";
import type { FoldedMessage, TaskFold } from "./task-fold.js";

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
  /** What its events (of every attempt, in order) have made. */
  fold: TaskFold;
}

/**
 * Builds a desktop session's transcript from its tasks' folded events. A message enters the list
 * only once complete (its `assistant.final`, or the end of its turn), and a turn's user marker only
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
    const { done, open, unattached } = task.fold;
    const finished = task.state !== "queued" && task.state !== "claimed";
    // A finished turn's unfinished messages complete with it; tools seen before any text get one of their own.
    const orphanTools =
      finished && unattached.length > 0 ? [{ id: `${task.id}:tools`, text: "", tools: unattached, createdAt: task.createdAt.toISOString() }] : [];
    const completed = finished ? [...done, ...open, ...orphanTools] : done;
    let lastCompleted: Transcript["finalAssistant"] = null;
    for (const message of completed) {
      messages.push(toMessage(message));
      if (message.text !== "") lastCompleted = { index: offset + messages.length - 1, text: message.text };
    }
    if (finished && lastCompleted) finalAssistant = lastCompleted;
    else if (!finished && open.length > 0) partialText = open.map((m) => m.text).join("\n\n");
  }
  return { messages, partialText, finalAssistant, offset, turns };
}

function toMessage(message: FoldedMessage): TranscriptMessage {
  const { text, truncated } = boundText(message.text);
  return { id: message.id, role: "assistant", text, truncated, toolCalls: message.tools, createdAt: message.createdAt };
}
