import { type PendingInput } from "@openwork/remote-session-core";
import { pendingInput } from "@openwork/remote-session-core/target";
import type { MessageWithParts, PermissionRequest, QuestionRequest } from "./opencode-schemas.js";

/** One waiting request of a worker session, with what answering it needs. */
export type WorkerRequest = { pending: PendingInput } & ({ kind: "permission" } | { kind: "question"; questions: number });

/**
 * The permission and question requests of one worker session, oldest first, as `pending` blocks.
 * The engine's requests carry no time: when asked is when their tool call started running.
 */
export function sessionRequests(
  sessionId: string,
  lists: { permissions: PermissionRequest[]; questions: QuestionRequest[] },
  messages: MessageWithParts[],
): WorkerRequest[] {
  const startedAt = (callID: string | undefined) => {
    const part = callID ? messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.callID === callID) : undefined;
    const start = part?.state?.time?.start;
    return start === undefined ? {} : { askedAt: new Date(start).toISOString() };
  };
  const permissions = lists.permissions
    .filter((r) => r.sessionID === sessionId)
    .map((r): WorkerRequest => ({
      kind: "permission",
      pending: pendingInput({
        kind: "permission",
        id: r.id,
        title: r.permission,
        detail: typeof r.metadata?.command === "string" ? r.metadata.command : r.patterns.join("\n"),
        ...startedAt(r.tool?.callID),
      }),
    }));
  const questions = lists.questions
    .filter((r) => r.sessionID === sessionId && r.questions.length > 0)
    .map((r): WorkerRequest => ({
      kind: "question",
      questions: r.questions.length,
      pending: pendingInput({
        kind: "question",
        id: r.id,
        title: r.questions[0]!.header,
        detail: r.questions.map((q) => q.question).join("\n"),
        options: r.questions[0]!.options,
        ...startedAt(r.tool?.callID),
      }),
    }));
  return [...permissions, ...questions].sort((a, b) => (a.pending.askedAt ?? "").localeCompare(b.pending.askedAt ?? ""));
}
