import type { Assignment } from "@openwork/runner-protocol";
import { type ClaimOutcome, claimNextTask } from "../store/claim-task.js";
import { failClaimedTask, MODEL_ACCESS_LOST } from "../store/fail-claimed-task.js";
import { type RunnerIdentity, type TaskKind, type TaskRow, taskKey } from "../store/task-row.js";
import { transaction } from "../store/transaction.js";
import type { RouteContext } from "./route-context.js";
import { recordClaim } from "./task-spans.js";
import { sessionMcpFor } from "./session-mcp.js";
import { toAssignment } from "./to-assignment.js";

// A claim-next passes over this many tasks that fail their claim-time checks before it answers none.
const CLAIM_NEXT_TRIES = 5;

/** Why a claim was refused at claim time. */
export interface ClaimRefusal {
  code: string;
  message: string;
}

/**
 * The assignment of `first` once it passes its claim-time checks. A task refused there is failed,
 * and the runner's oldest task of `kinds` is claimed in the same transaction and checked instead,
 * `CLAIM_NEXT_TRIES` claims in all. Null when none passes. `after` is the task whose completion
 * claims it. `more`: the last claim saw another task of `kinds` waiting.
 */
export async function checkedClaim(
  ctx: RouteContext,
  runner: RunnerIdentity,
  first: ClaimOutcome | null,
  kinds: readonly TaskKind[],
  after?: string,
): Promise<{ assignment: Assignment | null; more: boolean }> {
  let outcome = first;
  for (let tries = 1; outcome; tries++) {
    const cause = await claimTimeRefusal(ctx, outcome);
    if (!cause) break;
    outcome = await refuseClaim(ctx, runner, outcome.task, cause, tries < CLAIM_NEXT_TRIES ? kinds : [], after);
  }
  if (!outcome) return { assignment: null, more: false };
  return { assignment: await accepted(ctx, runner, outcome), more: outcome.kind === "claimed" && outcome.more === true };
}

/** `checkedClaim`'s assignment alone (a completion's next task). */
export async function checkedAssignment(...args: Parameters<typeof checkedClaim>): Promise<Assignment | null> {
  return (await checkedClaim(...args)).assignment;
}

/** Claims the runner's oldest task of `kinds` in a transaction of its own; null when none waits (or none is asked for). */
export async function claimOldest(ctx: RouteContext, runner: RunnerIdentity, kinds: readonly TaskKind[]): Promise<ClaimOutcome | null> {
  if (kinds.length === 0) return null;
  return transaction(ctx, (tx, hints) => claimNextTask(tx, hints, runner, kinds, ctx.leaseMs));
}

/**
 * Fails a task refused at claim time, and claims the runner's oldest task of `kinds` instead in
 * the same transaction (none when `kinds` is empty).
 */
export async function refuseClaim(
  ctx: RouteContext,
  runner: RunnerIdentity,
  task: TaskRow,
  cause: ClaimRefusal,
  kinds: readonly TaskKind[] = [],
  after?: string,
): Promise<ClaimOutcome | null> {
  const next = await transaction(ctx, async (tx, hints) => {
    await failClaimedTask(tx, hints, ctx.dialects, taskKey(task), cause);
    return kinds.length > 0 ? claimNextTask(tx, hints, runner, kinds, ctx.leaseMs, after === undefined ? undefined : { taskId: after }) : null;
  });
  ctx.logger.warn("desktop runner: task failed at claim", { taskId: task.id, runnerId: runner.runnerId, code: cause.code });
  return next;
}

/**
 * The assignment of a claim that passed its checks, with its engine's MCP entry when the host
 * issues them; a fresh claim is logged and its wait reported.
 */
export async function accepted(ctx: RouteContext, runner: RunnerIdentity, outcome: ClaimOutcome): Promise<Assignment> {
  const { kind, task, localSessionId } = outcome;
  if (kind === "claimed") {
    ctx.logger.info("desktop runner: task claimed", { taskId: task.id, runnerId: runner.runnerId, attempt: task.attempt, kind: task.kind });
    if (task.attempt === 1 && task.claimed_at) ctx.onClaimed?.(task.claimed_at.getTime() - task.created_at.getTime());
    recordClaim(ctx.tracer, task, runner);
  }
  const mcp = await sessionMcpFor(ctx.sql, ctx.sessionMcp, task, outcome.kind === "claimed" ? outcome.owner : undefined);
  return { ...toAssignment(task, localSessionId, ctx.heartbeatIntervalMs), ...(mcp ? { mcp } : {}) } as Assignment;
}

/** Re-checks a fresh claim for what may have changed since the task was queued (the proposal's rule); a replayed claim passed them already. */
export async function claimTimeRefusal(ctx: RouteContext, { kind, task, localSessionId }: ClaimOutcome): Promise<ClaimRefusal | null> {
  if (kind !== "claimed") return null;
  const scope = { organizationId: task.organization_id, memberId: task.member_id };
  if (task.model && ctx.mayUseModel && !(await ctx.mayUseModel(scope, task.model))) {
    return MODEL_ACCESS_LOST;
  }
  if (task.kind === "remote_session.send" && !localSessionId) {
    return { code: "session_not_bound", message: "the desktop never reported a local session for this remote session" };
  }
  return null;
}
