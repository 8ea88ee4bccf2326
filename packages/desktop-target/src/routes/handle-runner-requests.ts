import {
  ClaimRequestSchema,
  CompleteRequestSchema,
  HeartbeatRequestSchema,
  PostEventsRequestSchema,
} from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { appendEvents } from "../store/append-events.js";
import { claimTask } from "../store/claim-task.js";
import { completeTask } from "../store/complete-task.js";
import { failClaimedTask } from "../store/fail-claimed-task.js";
import { heartbeatLease } from "../store/heartbeat-lease.js";
import { listWork } from "../store/list-work.js";
import type { RunnerIdentity, TaskRow } from "../store/task-row.js";
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
  const outcome = await ctx.sql.begin((tx) => claimTask(tx, runner, taskId, ctx.leaseMs));
  const { task, localSessionId } = outcome;
  if (outcome.kind === "claimed") {
    const cause = await claimTimeRefusal(ctx, task, localSessionId);
    if (cause) {
      await ctx.sql.begin((tx) => failClaimedTask(tx, task.id, cause));
      ctx.logger.warn("desktop runner: task failed at claim", { taskId, runnerId: runner.runnerId, code: cause.code });
      throw new ChannelRefusal("claim_conflict", `the task failed at claim: ${cause.message}`, { cause: cause.code });
    }
    ctx.logger.info("desktop runner: task claimed", { taskId, runnerId: runner.runnerId, attempt: task.attempt, kind: task.kind });
    if (task.attempt === 1 && task.claimed_at) ctx.onClaimed?.(task.claimed_at.getTime() - task.created_at.getTime());
  }
  return json(200, { assignment: toAssignment(task, localSessionId, ctx.heartbeatIntervalMs) });
}

/** Re-checks at claim what may have changed since the task was queued (the proposal's rule). */
async function claimTimeRefusal(
  ctx: RouteContext,
  task: Pick<TaskRow, "organization_id" | "member_id" | "model" | "kind">,
  localSessionId: string | null,
): Promise<{ code: string; message: string } | null> {
  const scope = { organizationId: task.organization_id, memberId: task.member_id };
  if (task.model && ctx.mayUseModel && !(await ctx.mayUseModel(scope, task.model))) {
    return { code: "model_access_lost", message: "the member may no longer use the requested model" };
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
  return json(200, await ctx.sql.begin((tx) => appendEvents(tx, runner, taskId, body)));
}

/** `POST tasks/:id/complete`. */
export async function handleComplete(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const body = parseOrRefuse(CompleteRequestSchema, await readJsonBody(request));
  const answer = await ctx.sql.begin((tx) => completeTask(tx, runner, taskId, body));
  ctx.logger.info("desktop runner: task completed", { taskId, runnerId: runner.runnerId, status: body.status });
  return json(200, answer);
}
