import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { EngineRespondInput, RespondOutcome } from "@openwork/remote-session-core/internal";
import { checkAnswerFits, inputNotPending } from "@openwork/remote-session-core/target";
import { taskRequirements } from "@openwork/runner-protocol/internal";
import { settled } from "./await-task.js";
import type { DesktopContext } from "./desktop-context.js";
import { fail } from "./desktop-errors.js";
import { holderFor } from "./holder-for.js";
import { enqueueTask, holderTask } from "./store/enqueue-task.js";
import { loadSessionTasks } from "./store/load-session-tasks.js";
import { stillAsked } from "./store/asked-request.js";
import { transaction } from "./store/transaction.js";

/**
 * The answer is a task for the desktop holding the session, which the turn waiting on it never
 * blocks; the call waits (like a relayed read) for the desktop to hand it to its engine.
 */
export async function desktopRespond(ctx: DesktopContext, call: TargetCall, session: LedgerSession, input: EngineRespondInput): Promise<RespondOutcome> {
  const relayed = ctx.dialects.relayOf(session);
  if (relayed) fail("desktop_update_required", relayed.answersInApp);
  const pending = await stillAsked(ctx.sql, session, await loadSessionTasks(ctx.sql, session));
  if (pending?.id !== input.requestId) return inputNotPending(input.requestId);
  checkAnswerFits(pending.kind, input.answer);
  const requirements = taskRequirements({ kind: "remote_session.respond" });
  await holderFor(ctx, call, session, "remote_session.respond", requirements);
  const answer = { requestId: input.requestId, answer: input.answer };
  const task = await transaction(ctx.store, (tx, hints) =>
    enqueueTask(
      tx,
      hints,
      call,
      holderTask(session, { kind: "remote_session.respond", requirements, claimWithinMs: ctx.timings.claimDeadlineMs, input: answer }),
    ),
  );
  ctx.logger.info("desktop target: answer queued", { sessionId: session.id, referenceId: call.referenceId, kind: pending.kind });
  const ended = await settled(ctx.relay, session.id, task, call.signal);
  if (ended?.state === "failed" && ended.failure_code === "input_not_pending") return inputNotPending(input.requestId);
  if (ended && ended.state !== "done") fail("desktop_request_failed", `the desktop could not deliver the answer (${ended.failure_code ?? ended.state})`);
  return {
    sessionId: session.id,
    requestId: input.requestId,
    state: ended ? "running" : "waiting_input",
    alreadyAnswered: false,
    delivered: ended !== null,
  };
}
