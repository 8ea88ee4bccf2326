import type { PendingInput } from "@openwork/remote-session-core/internal";
import { pendingInput } from "@openwork/remote-session-core/target";
import { describePermission, describeQuestion, type MessageWithParts, type PermissionRequest, type QuestionRequest } from "@openwork/opencode-client/internal";

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
    .map((r): WorkerRequest => ({ kind: "permission", pending: pendingInput({ ...describePermission(r), ...startedAt(r.tool?.callID) }) }));
  const questions = lists.questions
    .filter((r) => r.sessionID === sessionId)
    .flatMap((r): WorkerRequest[] => {
      const described = describeQuestion(r);
      if (!described) return [];
      const { questions: count, ...question } = described;
      return [{ kind: "question", questions: count, pending: pendingInput({ ...question, ...startedAt(r.tool?.callID) }) }];
    });
  return [...permissions, ...questions].sort((a, b) => (a.pending.askedAt ?? "").localeCompare(b.pending.askedAt ?? ""));
}
