import { type RunnerHandlers, type TaskContext, taskAbortReason } from "@openwork/runner-protocol";
import type { LocalEngine } from "./local-engine.js";

/** Runs remote-session tasks as local sessions of the engine, reporting progress as events. */
export function createRunnerHandlers(engine: LocalEngine): RunnerHandlers {
  const turn = async (sessionId: string, messageId: string, text: string, { signal, emit }: TaskContext) => {
    emit({ type: "status", payload: { status: "running" } });
    let replyId: string | null = null;
    const reply = await engine.prompt({
      sessionId,
      messageId,
      text,
      signal,
      onText: (delta) => emit({ type: "assistant.delta", payload: { messageId: (replyId ??= `${messageId}-reply`), text: delta } }),
    });
    if (taskAbortReason(signal) === "cancel_requested") return { status: "cancelled" as const, localSessionId: sessionId };
    emit({ type: "assistant.final", payload: { messageId: replyId ?? `${messageId}-reply`, text: reply.text } });
    return { status: "done" as const, localSessionId: sessionId };
  };
  return {
    "remote_session.create": async (task, context) => {
      const sessionId = await engine.createSession({ title: task.title, workspaceId: task.workspaceId });
      context.emit({ type: "session.bound", payload: { localSessionId: sessionId } });
      if (!task.prompt) return { status: "done", localSessionId: sessionId, summary: "Remote session created" };
      return turn(sessionId, task.taskId, task.prompt, context);
    },
    "remote_session.send": (task, context) => turn(task.localSessionId, task.messageId, task.prompt, context),
  };
}
