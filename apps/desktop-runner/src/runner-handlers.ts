import type { CreateAssignment, SessionMcp, TaskEventInput } from "@openwork/runner-protocol";
import { type RunnerHandlers, type RunnerLogger, type TaskContext, taskAbortReason } from "@openwork/runner-protocol/client";
import { addWorktree, WorktreeError, worktreeName } from "./git-worktree.js";
import type { RunnerWorkspace } from "./inventory-reports.js";
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

/** The create could not get the folder it runs in: the task fails with this code, nothing was made. */
class PlacementFailure extends Error {
  constructor(
    readonly code: "workspace_unavailable" | "worktree_failed",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The folder a create's session works in: its workspace's (the active one when it names none),
 * or with `worktree` a new git worktree of it, named after the session and left afterwards.
 * Without configured workspaces a create names none, as before, and the engine decides.
 */
async function directoryFor(task: CreateAssignment, workspaces: readonly RunnerWorkspace[], logger?: RunnerLogger): Promise<string | null> {
  const workspace = task.workspaceId === null ? workspaces[0] : workspaces.find((w) => w.workspaceId === task.workspaceId);
  if (task.workspaceId !== null && workspaces.length > 0 && !workspace) {
    throw new PlacementFailure("workspace_unavailable", `this desktop serves no workspace ${task.workspaceId}`);
  }
  if (!task.worktree) return workspace?.directory ?? null;
  if (!workspace) throw new PlacementFailure("worktree_failed", "this desktop serves no workspace to make a worktree of");
  try {
    const made = await addWorktree(workspace.directory, worktreeName(task));
    logger?.info("desktop runner: worktree added", { taskId: task.taskId, sessionId: task.sessionId });
    return made.directory;
  } catch (error) {
    throw new PlacementFailure("worktree_failed", error instanceof WorktreeError ? error.message : String(error));
  }
}

/** Runs remote-session tasks as local sessions of the engine, reporting progress as events. */
export function createRunnerHandlers(engine: LocalEngine, workspaces: readonly RunnerWorkspace[] = [], logger?: RunnerLogger): RunnerHandlers {
  // The entry goes to the engine before the prompt, and each fresher one after it; one the engine
  // cannot take leaves the turn running without it (logged, never the credential itself).
  const useMcp = (sessionId: string, entry: SessionMcp | undefined) =>
    entry && engine.useMcp
      ? engine.useMcp({ sessionId, url: entry.url, authorization: entry.authorization }).catch((error: unknown) => {
          logger?.warn("desktop runner: the engine took no MCP entry", { sessionId, error: error instanceof Error ? error.message : String(error) });
        })
      : Promise.resolve();
  const turn = async (sessionId: string, messageId: string, text: string, { signal, emit, mcp }: TaskContext) => {
    await useMcp(sessionId, mcp.current());
    mcp.onChange((entry) => void useMcp(sessionId, entry));
    emit({ type: "status", payload: { status: "running" } });
    const reply = await engine.prompt({ sessionId, messageId, text, signal, onProgress: (progress) => emit(toEvent(progress)) });
    if (taskAbortReason(signal) === "cancel_requested") return { status: "cancelled" as const, localSessionId: sessionId };
    emit({ type: "assistant.final", payload: { messageId: reply.messageId, text: reply.text } });
    return { status: "done" as const, localSessionId: sessionId };
  };
  return {
    "remote_session.create": async (task, context) => {
      let directory: string | null;
      try {
        directory = await directoryFor(task, workspaces, logger);
      } catch (error) {
        if (!(error instanceof PlacementFailure)) throw error;
        return { status: "failed", error: { code: error.code, message: error.message } };
      }
      const sessionId = await engine.createSession({ title: task.title, workspaceId: task.workspaceId, directory });
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
