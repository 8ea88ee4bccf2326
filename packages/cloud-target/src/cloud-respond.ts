import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { EngineRespondInput, RespondOutcome } from "@openwork/remote-session-core/internal";
import { checkAnswerFits, inputNotPending } from "@openwork/remote-session-core/target";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { follow } from "./cloud-follow.js";
import { locate, sourceOf } from "./cloud-ref.js";
import { sessionRequests } from "./pending-requests.js";

// Answered through the engine's own reply routes; the turn resumes (or, refused, ends) there.
export async function respondCloudRequest(ctx: CloudContext, call: TargetCall, session: LedgerSession, input: EngineRespondInput): Promise<RespondOutcome> {
  const { client, worker } = await clientFor(ctx, call);
  const { ref, remoteId } = locate(session);
  const request = sessionRequests(remoteId, await client.requests(ref.workspaceId), []).find((r) => r.pending.id === input.requestId);
  if (!request) return inputNotPending(input.requestId);
  checkAnswerFits(request.kind, input.answer);
  await follow(ctx, client, sourceOf(worker, ref.workspaceId), remoteId, {
    call,
    sessionId: session.id,
    from: [session.state, "running"],
    promptAt: Date.now(),
    targetRef: session.targetRef,
    budgeted: session.budgeted,
  });
  const { answer } = input;
  const delivered =
    "permission" in answer
      ? await client.replyPermission(ref.workspaceId, input.requestId, answer.permission)
      : await client.replyQuestion(
          ref.workspaceId,
          input.requestId,
          Array.from({ length: request.kind === "question" ? request.questions : 1 }, () => [answer.text]),
        );
  if (!delivered) return inputNotPending(input.requestId);
  ctx.logger.info("cloud target: request answered", { sessionId: session.id, referenceId: call.referenceId, kind: request.kind });
  return { sessionId: session.id, requestId: input.requestId, state: "running", alreadyAnswered: false, delivered: true, sessionState: "running" };
}
