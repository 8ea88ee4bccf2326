import {
  ClaimNextRequestSchema,
  ClaimRequestSchema,
  CompleteRequestSchema,
  HeartbeatRequestSchema,
  PostEventsRequestSchema,
} from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import { kindsToClaim } from "../runner-abilities.js";
import { appendEvents, tooLarge } from "../store/append-events.js";
import type { VerifiedRunner } from "../store/check-registration.js";
import { claimTask } from "../store/claim-task.js";
import { completeAndClaim } from "../store/complete-and-claim.js";
import { heartbeatLease } from "../store/heartbeat-lease.js";
import { listWork } from "../store/list-work.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { transaction } from "../store/transaction.js";
import { accepted, checkedAssignment, claimTimeRefusal, refuseClaim } from "./next-assignment.js";
import { claimAnyKind } from "./claim-host-work.js";
import { readJsonBody } from "./read-json-body.js";
import { sessionMcpForHeld } from "./session-mcp.js";
import type { RouteContext } from "./route-context.js";
import { inRunnerSpan } from "./task-spans.js";
import { json, parseOrRefuse } from "./to-response.js";

/** `GET work`: the tasks this runner may claim now. */
export async function handleWork(ctx: RouteContext, runner: RunnerIdentity): Promise<Response> {
  return json(200, { items: await listWork(ctx.sql, runner) });
}

/** `POST tasks/:id/claim`: take a task, or get it again if this runner already holds it. */
export async function handleClaim(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  parseOrRefuse(ClaimRequestSchema, await readJsonBody(request));
  const outcome = await transaction(ctx, (tx, hints) => claimTask(tx, hints, runner, taskId, ctx.leaseMs));
  const cause = await claimTimeRefusal(ctx, outcome);
  if (cause) {
    await refuseClaim(ctx, runner, outcome.task, cause);
    throw new ChannelRefusal("claim_conflict", `the task failed at claim: ${cause.message}`, { cause: cause.code });
  }
  return json(200, { assignment: await accepted(ctx, runner, outcome) });
}

/** `POST tasks/claim-next` (protocol 3): the oldest task this runner may take now, or `{ assignment: null }`. */
export async function handleClaimNext(ctx: RouteContext, runner: RunnerIdentity, request: Request): Promise<Response> {
  const { kinds } = parseOrRefuse(ClaimNextRequestSchema, await readJsonBody(request));
  return json(200, await claimAnyKind(ctx, runner, kinds));
}

/** `POST tasks/:id/heartbeat`. */
export async function handleHeartbeat(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const { attempt, refreshMcp } = parseOrRefuse(HeartbeatRequestSchema, await readJsonBody(request));
  const answer = await heartbeatLease(ctx.sql, runner, taskId, attempt, ctx.leaseMs);
  // A fresh entry only for the attempt that still holds its turn.
  const mcp = refreshMcp && answer.leaseValid ? await sessionMcpForHeld(ctx.sql, ctx.sessionMcp, runner, taskId) : undefined;
  return json(200, { ...answer, ...(mcp ? { mcp } : {}) });
}

/** `POST tasks/:id/events`. */
export async function handleTaskEvents(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const body = parseOrRefuse(PostEventsRequestSchema, await readJsonBody(request));
  const answer = await inRunnerSpan(ctx.tracer, "desktop events", request, taskId, () =>
    transaction(ctx, (tx, hints) => appendEvents(tx, hints, ctx.dialects, runner, taskId, body, ctx.turnEventBytes)),
  );
  // The turn was ended in that transaction: the runner stops it (its heartbeats now say the lease is gone).
  if (!answer) throw new ChannelRefusal("turn_too_large", tooLarge(ctx.turnEventBytes).message, { taskId });
  return json(200, answer);
}

/**
 * `POST tasks/:id/complete`: the completion and the claim of the runner's next task in one
 * transaction (`completeAndClaim`), then that task's claim-time checks.
 */
export async function handleComplete(ctx: RouteContext, verified: VerifiedRunner, taskId: string, request: Request): Promise<Response> {
  const body = parseOrRefuse(CompleteRequestSchema, await readJsonBody(request));
  const { runner, answer, next } = await inRunnerSpan(ctx.tracer, "desktop complete", request, taskId, () => completeAndClaim(ctx, verified, taskId, body));
  ctx.logger.info("desktop runner: task completed", { taskId, runnerId: runner.runnerId, status: body.status });
  const assignment = body.next ? { next: await checkedAssignment(ctx, runner, next, kindsToClaim(runner, body.next.kinds), taskId) } : {};
  return json(200, { ...answer, ...assignment });
}
