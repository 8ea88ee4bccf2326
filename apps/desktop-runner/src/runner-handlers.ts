import type { TaskEventInput } from "@openwork/runner-protocol";
import { type RunnerHandlers, type TaskContext, taskAbortReason } from "@openwork/runner-protocol/client";
import type { EngineProgress, LocalEngine } from "./local-engine.js";

/** A turn's progress as protocol events (the runner client cuts long text to protocol size). */
function toEvent(progress: EngineProgress): Exclude<TaskEventInput, { type: "terminal" }> {
  switch (progress.type) {
    case "text":
      return { type: "assistant.delta", payload: { messageId: progress.messageId, text: progress.delta } };
    case "tool": {
      const { callId, name, status, summary } = progress;
      return { type: "tool.call", payload: { callId, name, status, ...(summary ? { summary } : {}) } };
    }
    case "usage": {
      const { type: _, ...payload } = progress;
      return { type: "usage", payload };
    }
    case "asked":
      return { type: "input.requested", payload: progress.request };
    case "resolved":
      return { type: "input.resolved", payload: { requestId: progress.requestId } };
  }
}

/** Runs remote-session tasks as local sessions of the engine, reporting progress as events. */
export function createRunnerHandlers(engine: LocalEngine): RunnerHandlers {
  const turn = async (sessionId: string, messageId: string, text: string, { signal, emit }: TaskContext) => {
    emit({ type: "status", payload: { status: "running" } });
    const reply = await engine.prompt({ sessionId, messageId, text, signal, onProgress: (progress) => emit(toEvent(progress)) });
    if (taskAbortReason(signal) === "cancel_requested") return { status: "cancelled" as const, localSessionId: sessionId };
    emit({ type: "assistant.final", payload: { messageId: reply.messageId, text: reply.text } });
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
    // The answer goes to the engine; the turn it unblocks reports what follows.
    "remote_session.respond": async (task) => {
      const answered = await engine.respond({ sessionId: task.localSessionId, requestId: task.requestId, answer: task.answer });
      if (!answered)
        return {
          status: "failed",
          error: { code: "input_not_pending", message: `the engine waits on no request ${task.requestId}` },
          localSessionId: task.localSessionId,
        };
      return { status: "done", localSessionId: task.localSessionId };
    },
  };
}
