import { type LedgerSession, type Model, newId, type TargetCall } from "@openwork/remote-session-core";
import type { SendInput, SendOutcome } from "@openwork/remote-session-core/internal";
import { encodeCursor } from "@openwork/remote-session-core/internal";
import { acceptsPrompt, lockSessionRow } from "@openwork/remote-session-core/internal";
import { taskRequirements } from "@openwork/runner-protocol/internal";
import { chooseRunner } from "./choose-runner.js";
import type { DesktopContext } from "./desktop-context.js";
import { fail } from "./desktop-errors.js";
import { runnersOf } from "./runners-of.js";
import { enqueueTask } from "./store/enqueue-task.js";
import { loadSessionTasks } from "./store/load-session-tasks.js";
import { syncSessionState } from "./store/sync-session-state.js";
import { leaving } from "./store/task-state-sql.js";
import { transaction } from "./store/transaction.js";
import { buildTranscript } from "./transcript/build-transcript.js";

/** Follow-ups a session may have waiting for its desktop at once. */
export const MAX_QUEUED_TURNS = 8;

/** A follow-up, queued as a task for the desktop holding the session (any desktop while none does). */
export async function desktopSend(ctx: DesktopContext, call: TargetCall, session: LedgerSession, input: SendInput & { model?: Model }): Promise<SendOutcome> {
  if (!acceptsPrompt(session.state)) {
    fail("session_not_active", `the session is ${session.state} and takes no more prompts; create a new one`);
  }
  const holder = typeof session.targetRef.runnerId === "string" ? session.targetRef.runnerId : undefined;
  // The follow-up's model rides on its task, re-checked at claim against the member's access, as a create's.
  const requirements = taskRequirements({ kind: "remote_session.send", model: input.model ?? null });
  if (holder) chooseRunner(await runnersOf(ctx, call, holder), { kind: "remote_session.send", requirements }, { pin: holder, storeAndForward: false });
  const messageId = input.messageId ?? newId("msg");
  // Where the reply will appear for a reader: after everything the transcript holds now.
  const before = ctx.dialects.relayOf(session) ? null : buildTranscript(await loadSessionTasks(ctx.sql, session)).messages.length;
  const task = await transaction(ctx.store, async (tx, hints) => {
    // Serialized per session by the row lock, so concurrent sends cannot both squeeze past the cap.
    await lockSessionRow(tx, session);
    const [{ waiting }] = (await tx`
          select count(*)::int as waiting from desktop_task
          where organization_id = ${session.organizationId} and session_id = ${session.id} and ${leaving(tx, "claim")}`) as unknown as [{ waiting: number }];
    if (waiting >= MAX_QUEUED_TURNS) {
      fail("queue_full", `${waiting} follow-ups already wait for this desktop; read the session and send again when one ran`, { retryAfterMs: 5_000 });
    }
    const queued = await enqueueTask(tx, hints, call, {
      sessionId: session.id,
      kind: "remote_session.send",
      title: session.title,
      prompt: input.prompt,
      model: input.model ?? null,
      workspaceId: typeof session.targetRef.workspaceId === "string" ? session.targetRef.workspaceId : null,
      messageId,
      localSessionId: session.targetSessionId,
      pinnedRunnerId: holder ?? null,
      requirements,
      deliverBy: null,
      claimWithinMs: ctx.timings.claimDeadlineMs,
    });
    // Queued behind a running turn, the session stays running; else it is queued.
    await syncSessionState(tx, hints, ctx.dialects, session, { activity: true, lastError: null });
    return queued;
  });
  ctx.logger.info("desktop target: follow-up queued", { sessionId: session.id, referenceId: call.referenceId, promptChars: input.prompt.length });
  return {
    sessionId: session.id,
    messageId,
    state: "accepted",
    alreadyPresent: false,
    ...(before === null ? {} : { cursor: encodeCursor(session.id, before, before - 1) }),
    // The follow-up's task is OpenWork's request: its callers read and stop by this id.
    fields: { requestId: task.id },
  };
}
