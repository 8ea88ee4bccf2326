import {
  type Assignment,
  ClaimNextRequestSchema,
  ClaimRequestSchema,
  CompleteRequestSchema,
  HeartbeatRequestSchema,
  PostEventsRequestSchema,
} from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { appendEvents, tooLarge } from "../store/append-events.js";
import { type ClaimOutcome, claimNextTask, claimTask } from "../store/claim-task.js";
import { kindsRunnerTakes } from "../runner-abilities.js";
import { completeTask } from "../store/complete-task.js";
import { failClaimedTask, MODEL_ACCESS_LOST } from "../store/fail-claimed-task.js";
import { heartbeatLease } from "../store/heartbeat-lease.js";
import { listWork } from "../store/list-work.js";
import { pipeline, transaction } from "../store/transaction.js";
import { type RunnerIdentity, type TaskRow, taskKey } from "../store/task-row.js";
import { checkRegistration, type VerifiedRunner } from "./authenticate-runner.js";
import { readJsonBody } from "./read-json-body.js";
import type { RouteContext } from "./route-context.js";
import { toAssignment } from "./to-assignment.js";
import { json, parseOrRefuse } from "./to-response.js";

/** `GET work`: the tasks this runner may claim now. */
export async function handleWork(ctx: RouteContext, runner: RunnerIdentity): Promise<Response> {
  return json(200, { items: await listWork(ctx.sql, runner) });
}

/** `POST tasks/:id/claim`: take a task, or get it again if this runner already holds it. */
export async function handleClaim(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  parseOrRefuse(ClaimRequestSchema, await readJsonBody(request));
  const outcome = await transaction(ctx, (tx, hints) => claimTask(tx, hints, runner, taskId, ctx.leaseMs));
  const cause = await acceptClaim(ctx, runner, outcome);
  if (cause) throw new ChannelRefusal("claim_conflict", `the task failed at claim: ${cause.message}`, { cause: cause.code });
  return json(200, { assignment: toAssignment(outcome.task, outcome.localSessionId, ctx.heartbeatIntervalMs) });
}

// A claim-next passes over this many tasks that fail their claim-time checks before it answers none.
const CLAIM_NEXT_TRIES = 5;

/** `POST tasks/claim-next` (protocol 3): the oldest task this runner may take now, or `{ assignment: null }`. */
export async function handleClaimNext(ctx: RouteContext, runner: RunnerIdentity, request: Request): Promise<Response> {
  const { kinds } = parseOrRefuse(ClaimNextRequestSchema, await readJsonBody(request));
  return json(200, { assignment: await claimNext(ctx, runner, kinds) });
}

/**
 * The oldest task of `kinds` this runner may take now, claimed and checked; null when none. A
 * first claim already made (in a completion's transaction) is checked first.
 */
async function claimNext(
  ctx: RouteContext,
  runner: RunnerIdentity,
  kinds: readonly string[] | undefined,
  options: { after?: string; first?: ClaimOutcome | null } = {},
): Promise<Assignment | null> {
  const takes = takenKinds(runner, kinds);
  let outcome = options.first;
  for (let i = 0; i < CLAIM_NEXT_TRIES && takes.length > 0; i++) {
    outcome ??= await transaction(ctx, (tx, hints) => claimNextTask(tx, hints, runner, takes, ctx.leaseMs, options.after));
    if (!outcome) break;
    if (!(await acceptClaim(ctx, runner, outcome))) return toAssignment(outcome.task, outcome.localSessionId, ctx.heartbeatIntervalMs);
    outcome = undefined;
  }
  return null;
}

/** The kinds a claim-next may hand this runner: what it takes, narrowed to what it asked for. */
const takenKinds = (runner: RunnerIdentity, kinds: readonly string[] | undefined) => kindsRunnerTakes(runner).filter((kind) => !kinds || kinds.includes(kind));

/** Runs the claim-time checks on a fresh claim: a refusal fails the task and is returned. */
async function acceptClaim(ctx: RouteContext, runner: RunnerIdentity, outcome: ClaimOutcome): Promise<{ code: string; message: string } | null> {
  const { task, localSessionId } = outcome;
  if (outcome.kind !== "claimed") return null;
  const cause = await claimTimeRefusal(ctx, task, localSessionId);
  if (cause) {
    await transaction(ctx, (tx, hints) => failClaimedTask(tx, hints, taskKey(task), cause));
    ctx.logger.warn("desktop runner: task failed at claim", { taskId: task.id, runnerId: runner.runnerId, code: cause.code });
    return cause;
  }
  ctx.logger.info("desktop runner: task claimed", { taskId: task.id, runnerId: runner.runnerId, attempt: task.attempt, kind: task.kind });
  if (task.attempt === 1 && task.claimed_at) ctx.onClaimed?.(task.claimed_at.getTime() - task.created_at.getTime());
  return null;
}

/** Re-checks at claim what may have changed since the task was queued (the proposal's rule). */
async function claimTimeRefusal(
  ctx: RouteContext,
  task: Pick<TaskRow, "organization_id" | "member_id" | "model" | "kind">,
  localSessionId: string | null,
): Promise<{ code: string; message: string } | null> {
  const scope = { organizationId: task.organization_id, memberId: task.member_id };
  if (task.model && ctx.mayUseModel && !(await ctx.mayUseModel(scope, task.model))) {
    return MODEL_ACCESS_LOST;
  }
  if (task.kind === "remote_session.send" && !localSessionId) {
    return { code: "session_not_bound", message: "the desktop never reported a local session for this remote session" };
  }
  return null;
}

/** `POST tasks/:id/heartbeat`. */
export async function handleHeartbeat(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const { attempt } = parseOrRefuse(HeartbeatRequestSchema, await readJsonBody(request));
  return json(200, await heartbeatLease(ctx.sql, runner, taskId, attempt, ctx.leaseMs));
}

/** `POST tasks/:id/events`. */
export async function handleTaskEvents(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const body = parseOrRefuse(PostEventsRequestSchema, await readJsonBody(request));
  const answer = await transaction(ctx, (tx, hints) => appendEvents(tx, hints, runner, taskId, body, ctx.turnEventBytes));
  // The turn was ended in that transaction: the runner stops it (its heartbeats now say the lease is gone).
  if (!answer) throw new ChannelRefusal("turn_too_large", tooLarge(ctx.turnEventBytes).message, { taskId });
  return json(200, answer);
}

/**
 * `POST tasks/:id/complete`. The hot path of protocol 3, so the runner's registration is checked
 * in the completion's transaction (its first round trip carries it), and the runner's next task
 * is claimed there too.
 */
export async function handleComplete(ctx: RouteContext, verified: VerifiedRunner, taskId: string, request: Request): Promise<Response> {
  const body = parseOrRefuse(CompleteRequestSchema, await readJsonBody(request));
  const { runner, done } = await transaction(ctx, async (tx, hints) => {
    const registered = checkRegistration(tx, verified);
    const claimAlong = async () => {
      const takes = body.next ? takenKinds(await registered, body.next.kinds) : [];
      return takes.length > 0 ? claimNextTask(tx, hints, await registered, takes, ctx.leaseMs, taskId) : null;
    };
    // A refused registration is the error thrown, whatever the completion did: it rolls back.
    const [runner, done] = await pipeline([
      registered,
      completeTask(tx, hints, verified.holder, taskId, body, body.next ? claimAlong : undefined, ctx.turnEventBytes),
    ]);
    return { runner, done };
  });
  const { replayed, nextTaskId, claimed, ...answer } = done;
  ctx.logger.info("desktop runner: task completed", { taskId, runnerId: runner.runnerId, status: body.status });
  if (!body.next) return json(200, answer);
  // A replay hands back the task the first answer carried, while this runner still holds it.
  if (replayed) return json(200, { ...answer, next: nextTaskId ? await heldAssignment(ctx, runner, nextTaskId) : null });
  return json(200, { ...answer, next: claimed ? await claimNext(ctx, runner, body.next.kinds, { after: taskId, first: claimed }) : null });
}

/** The assignment of a task this runner claimed and still holds, else null. */
async function heldAssignment(ctx: RouteContext, runner: RunnerIdentity, taskId: string): Promise<Assignment | null> {
  const outcome = await transaction(ctx, (tx, hints) => claimTask(tx, hints, runner, taskId, ctx.leaseMs)).catch((error: unknown) => {
    if (error instanceof ChannelRefusal) return null;
    throw error;
  });
  return outcome?.kind === "replayed" ? toAssignment(outcome.task, outcome.localSessionId, ctx.heartbeatIntervalMs) : null;
}
