import { HeartbeatRequestSchema, PostEventsRequestSchema, type WorkCompleteRequest, WorkCompleteRequestSchema } from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import { type HostWorkKind, isRefusal, type WorkRefusal } from "../host-work-kind.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { workRunner } from "./claim-host-work.js";
import { readJsonBody } from "./read-json-body.js";
import type { RouteContext } from "./route-context.js";
import { json, parseOrRefuse } from "./to-response.js";

// The routes of tasks of the host's own kinds (protocol 4): the channel authenticates, checks the
// body against the protocol and answers; the kind reads and writes its own rows.

/** The kind's answer, or its refusal as the channel's typed error. */
function answered<T extends object>(answer: T | WorkRefusal, taskId: string): T {
  if (isRefusal(answer)) throw new ChannelRefusal(answer.refused, answer.message, { taskId });
  return answer;
}

/** The kind a task id names; anything else is a 404, as for a task of another member. */
export function kindOfTask(ctx: RouteContext, taskId: string): HostWorkKind {
  const kind = ctx.workKinds.ofTask(taskId);
  if (!kind) throw new ChannelRefusal("not_found", "no such task", { taskId });
  return kind;
}

/** `POST tasks/:id/heartbeat` of a host's task. */
export async function handleHostHeartbeat(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const { attempt } = parseOrRefuse(HeartbeatRequestSchema, await readJsonBody(request));
  const lease = answered(await kindOfTask(ctx, taskId).heartbeat(workRunner(runner), taskId, attempt, ctx.leaseMs), taskId);
  return json(200, {
    attempt,
    leaseValid: lease.leaseValid,
    leaseExpiresAt: lease.leaseExpiresAt?.toISOString() ?? null,
    cancelRequested: lease.cancelRequested,
  });
}

/** `POST tasks/:id/events` of a host's task. */
export async function handleHostEvents(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const { attempt, events } = parseOrRefuse(PostEventsRequestSchema, await readJsonBody(request));
  const { nextSequence } = answered(await kindOfTask(ctx, taskId).appendEvents(workRunner(runner), taskId, attempt, events), taskId);
  return json(200, { taskId, attempt, nextSequence });
}

/**
 * `POST tasks/:id/complete` of a host's task. It claims no next task and leaves `next` out of the
 * answer, as a gateway that does not claim with completions does: a replayed completion could not
 * hand the same one back, so the runner claims again.
 */
export async function handleHostComplete(ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request): Promise<Response> {
  const { next: _, ...completion }: WorkCompleteRequest = parseOrRefuse(WorkCompleteRequestSchema, await readJsonBody(request));
  const { state } = answered(await kindOfTask(ctx, taskId).complete(workRunner(runner), taskId, completion), taskId);
  ctx.logger.info("desktop runner: task completed", { taskId, runnerId: runner.runnerId, status: completion.status });
  return json(200, { taskId, state });
}
