import { newId, type TargetCall } from "@openwork/remote-session-core";
import type { CreateOutcome, TargetCreateInput } from "@openwork/remote-session-core/internal";
import { taskRequirements } from "@openwork/runner-protocol/internal";
import type { DesktopContext } from "./desktop-context.js";
import { DesktopCreateSchema } from "./desktop-create-arguments.js";
import { fail } from "./desktop-errors.js";
import { placeCreate } from "./place-create.js";
import { runnersOf } from "./runners-of.js";
import { enqueueTask, findCreateTask } from "./store/enqueue-task.js";
import { findPinnedRunners } from "./store/find-pinned-runners.js";
import { transaction } from "./store/transaction.js";

/** A new session, placed on a desktop (or left for whichever takes it by `deliverBy`) and queued as its create task. */
export async function desktopCreate(ctx: DesktopContext, call: TargetCall, input: TargetCreateInput): Promise<CreateOutcome> {
  // A retried create (the same reserved session id) answers with the task it already queued.
  const queued = await findCreateTask(ctx.sql, call.organizationId, input.sessionId);
  if (queued) return createdOutcome(ctx, call, input.sessionId, queued);
  const extra = DesktopCreateSchema.parse(input.extra);
  const deliverBy = extra.deliverBy === undefined ? null : new Date(extra.deliverBy);
  if (deliverBy && deliverBy.getTime() <= Date.now()) {
    fail("invalid_capability_arguments", "deliverBy must be in the future");
  }
  const requirements = taskRequirements({ kind: "remote_session.create", model: input.model ?? null, worktree: extra.worktree === true });
  const { runner, workspaceId } = placeCreate(
    await runnersOf(ctx, call, extra.runner),
    { kind: "remote_session.create", requirements },
    {
      ...definedOf({ pin: extra.runner, workspace: extra.workspace, workspaceId: extra.workspaceId, engine: extra.engine, model: input.model }),
      storeAndForward: deliverBy !== null,
    },
  );
  const task = await transaction(ctx.store, async (tx, hints) => {
    // The desktop's own store: the row is taken (and its runner recorded) with the task,
    // atomically, under the row's lock; an attempt that finds it taken answers that task.
    const patch = { ...(runner ? { targetRef: { runnerId: runner.runner_id } } : {}), taken: true, expect: "queued", expectReserved: true } as const;
    if (!(await ctx.ledger.in(tx).update({ organizationId: call.organizationId, id: input.sessionId }, patch))) {
      return (
        (await findCreateTask(tx, call.organizationId, input.sessionId)) ??
        fail("session_not_active", "the session was stopped or removed before its create finished")
      );
    }
    return enqueueTask(tx, hints, call, {
      sessionId: input.sessionId,
      kind: "remote_session.create",
      title: input.title,
      prompt: input.prompt ?? null,
      model: input.model ?? null,
      workspaceId,
      worktree: extra.worktree === true,
      messageId: input.prompt ? newId("msg") : null,
      localSessionId: null,
      pinnedRunnerId: runner?.runner_id ?? null,
      requirements,
      deliverBy,
      claimWithinMs: ctx.timings.claimDeadlineMs,
    });
  });
  ctx.logger.info("desktop target: session queued", {
    sessionId: input.sessionId,
    referenceId: call.referenceId,
    runnerId: task.pinned_runner_id,
    promptChars: input.prompt?.length ?? 0,
  });
  return createdOutcome(ctx, call, input.sessionId, task, runner);
}

/** What a create answers for the task it (or an earlier attempt of it) queued, and the runner it is pinned to. */
async function createdOutcome(
  ctx: DesktopContext,
  call: TargetCall,
  sessionId: string,
  task: { id: string; pinned_runner_id: string | null; claim_deadline: Date },
  chosen?: { runner_id: string; name: string } | null,
) {
  const pinned = task.pinned_runner_id;
  const known = chosen?.runner_id === pinned ? [chosen] : [];
  const [runner] = pinned && known.length === 0 ? (await findPinnedRunners(ctx.sql, call, pinned)).filter((r) => r.runner_id === pinned) : known;
  const webUrl = ctx.webUrl?.({ sessionId, localSessionId: null });
  return {
    state: "queued" as const,
    ...(webUrl ? { webUrl } : {}),
    fields: {
      // The create's task is OpenWork's command: its callers read and stop by this id.
      commandId: task.id,
      ...(runner ? { runner: { runnerId: runner.runner_id, name: runner.name } } : {}),
      expiresAt: task.claim_deadline.toISOString(),
    },
  };
}

/** The members of `values` that are set: an optional field is absent, never undefined. */
function definedOf<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as never;
}
