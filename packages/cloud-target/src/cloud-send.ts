import type { LedgerSession, Model, TargetCall } from "@openwork/remote-session-core";
import type { SendInput, SendOutcome } from "@openwork/remote-session-core/internal";
import { encodeCursor } from "@openwork/remote-session-core/internal";
import { newOpencodeMessageId } from "@openwork/opencode-client/internal";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { follow } from "./cloud-follow.js";
import { observe } from "./cloud-look.js";
import { OWN_ENTRY, ownEntryRules, useMcp } from "./cloud-mcp.js";
import { locate, sourceOf } from "./cloud-ref.js";
import { buildCloudTranscript } from "./cloud-transcript.js";

export async function sendCloudPrompt(ctx: CloudContext, call: TargetCall, session: LedgerSession, input: SendInput & { model?: Model }): Promise<SendOutcome> {
  const { client, worker } = await clientFor(ctx, call);
  const { ref, remoteId } = locate(session);
  const messageId = input.messageId ?? newOpencodeMessageId();
  // One look at the messages: a retried send finds its prompt already there, and the
  // transcript before the prompt says where a reader finds the reply.
  const { messages, status, workerIdle } = await observe(client, ref.workspaceId, remoteId);
  const alreadyPresent = input.messageId !== undefined && messages.some((m) => m.info.id === messageId);
  const before = buildCloudTranscript(messages, { workerIdle }).messages;
  const listed = before.findIndex((m) => m.id === messageId);
  const position = alreadyPresent && listed >= 0 ? listed : before.length;
  const promptAt = Date.now();
  let ownEntry = session.targetRef[OWN_ENTRY] === true;
  if (!alreadyPresent) {
    // A prompt sent while a turn runs waits behind it: that turn's calls go through the entry
    // it has, which a registration would cut.
    if (status === undefined) {
      ownEntry = await ownEntryRules(ctx, client, ref.workspaceId, remoteId, session);
      await useMcp(ctx, call, client, ref.workspaceId, session);
    }
    const targetRef = { ...session.targetRef, lastPromptId: messageId, lastPromptAt: promptAt };
    await follow(ctx, client, sourceOf(worker, ref.workspaceId), remoteId, {
      call,
      sessionId: session.id,
      from: [session.state, "running"],
      promptAt,
      targetRef,
      budgeted: session.budgeted,
    });
    await client.promptAsync(ref.workspaceId, remoteId, { text: input.prompt, messageID: messageId, ...(input.model ? { model: input.model } : {}) });
  }
  ctx.logger.info("cloud target: prompt sent", { sessionId: session.id, referenceId: call.referenceId, alreadyPresent, promptChars: input.prompt.length });
  const targetRef = {
    lastPromptId: messageId,
    // Whose worker it is (a session from before this was recorded gets it here): see `followRunning`.
    memberId: call.memberId,
    ...(alreadyPresent ? {} : { lastPromptAt: promptAt }),
    ...(ownEntry ? { [OWN_ENTRY]: true } : {}),
  };
  return {
    sessionId: session.id,
    messageId,
    state: "accepted",
    alreadyPresent,
    cursor: encodeCursor(session.id, position, position - 1),
    sessionState: "running",
    targetRef,
  };
}
