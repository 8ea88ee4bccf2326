import { EngineRespondInputSchema } from "@openwork/remote-session-core/internal";
import type { Assignment } from "@openwork/runner-protocol";
import type { TaskRow } from "../store/task-row.js";

/** The assignment a claim hands over, built from the claimed row. */
export function toAssignment(task: TaskRow, localSessionId: string | null, heartbeatIntervalMs: number): Assignment {
  const lease = {
    taskId: task.id,
    sessionId: task.session_id,
    attempt: task.attempt,
    leaseExpiresAt: (task.lease_expires_at ?? new Date()).toISOString(),
    heartbeatIntervalMs,
    model: task.model,
    workspaceId: task.workspace_id,
    ...(task.trace_parent ? { traceparent: task.trace_parent } : {}),
  };
  if (task.kind === "remote_session.create") {
    return { ...lease, kind: "remote_session.create", title: task.title, prompt: task.prompt, ...(task.worktree ? { worktree: true } : {}) };
  }
  if (task.kind === "remote_session.respond") {
    const { requestId, answer } = EngineRespondInputSchema.parse(task.input);
    return { ...lease, kind: "remote_session.respond", localSessionId: localSessionId ?? "", requestId, answer };
  }
  return {
    ...lease,
    kind: "remote_session.send",
    localSessionId: localSessionId ?? "",
    messageId: task.message_id ?? task.id,
    prompt: task.prompt ?? "",
  };
}
