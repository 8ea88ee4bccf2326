import { ChannelRefusal } from "../../channel-refusal.js";
import { kindsRunnerTakes } from "../../runner-abilities.js";
import { claimTask } from "../../store/claim-task.js";
import { RECOVERY } from "../../desktop-result-fields.js";
import { recordClaim } from "../../routes/task-spans.js";
import { tracedPost } from "./openwork-spans.js";
import { listWork } from "../../store/list-work.js";
import { receiveCommand, receiveProgress, receiveRequest } from "./openwork-deliveries.js";
import { failClaimedTask, MODEL_ACCESS_LOST } from "../../store/fail-claimed-task.js";
import { type TaskKind, type TaskRow, taskKey } from "../../store/task-row.js";
import { leaving } from "../../store/task-state-sql.js";
import type { AuthenticatedRunner } from "../../store/check-registration.js";
import { type OpenworkContext, type OpenworkHandler, type OpenworkRoute, runnerCall } from "./openwork-call.js";
import {
  CommandCompleteSchema,
  EmptyBodySchema,
  OpenworkRefusal,
  openworkJson,
  RequestCompleteSchema,
  RequestResultSchemas,
  SessionReportSchema,
} from "./openwork-wire.js";
import { transaction } from "../../store/transaction.js";
import { OPENWORK_KIND_CAPABILITY } from "./openwork-kinds.js";

const CREATE = "remote_session_v1";
const CONTROL = "remote_session_control_v1";
// A command waits 10 minutes for its desktop (OpenWork's TTL); a claimed one is completed within seconds.
const COMMAND_LEASE_MS = 10 * 60_000;
const REQUEST_LEASE_MS = 2 * 60_000;
const OUTCOME_LIMIT_BYTES = 262_144;

/** 403 for a runner without the capability a route needs: the only 403 OpenWork's desktops expect. */
function requireCapability(runner: AuthenticatedRunner, capability: string): void {
  if (!runner.capabilities.includes(capability)) throw new OpenworkRefusal(403, "runner_capability_missing");
}

/** Runs a store step, answering any channel refusal with OpenWork's code for this route. */
async function orConflict<T>(status: number, code: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ChannelRefusal) throw new OpenworkRefusal(status, code);
    throw error;
  }
}

/**
 * Claims a task of one of `kinds` for an OpenWork runner; 409 `conflict` when it is not claimable
 * by it. A second claim of a task this runner already holds is handed back only to a desktop with
 * a recovery journal (`remote_session_recovery_v1`), and only before the task's deadline, as
 * den-api does: a desktop without one that lost the first answer would otherwise run the prompt twice.
 */
async function claimOfKind(
  ctx: OpenworkContext,
  runner: AuthenticatedRunner,
  id: string,
  kinds: TaskKind[],
  leaseMs: number,
  conflict: string,
): Promise<TaskRow> {
  const [kind] = await ctx.sql<{ kind: TaskKind }[]>`
    select kind from desktop_task where id = ${id} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}`;
  if (!kind || !kinds.includes(kind.kind)) throw new OpenworkRefusal(409, conflict);
  const outcome = await orConflict(409, conflict, () => transaction(ctx, (tx, hints) => claimTask(tx, hints, runner, id, leaseMs)));
  if (outcome.kind === "replayed" && !(runner.capabilities.includes(RECOVERY) && outcome.task.claim_deadline.getTime() > Date.now())) {
    throw new OpenworkRefusal(409, conflict);
  }
  // A model the member may no longer use fails the task instead of running it, as on our protocol.
  const { model, organization_id: organizationId, member_id: memberId } = outcome.task;
  if (outcome.kind === "claimed" && model && ctx.mayUseModel && !(await ctx.mayUseModel({ organizationId, memberId }, model))) {
    await transaction(ctx, (tx, hints) => failClaimedTask(tx, hints, ctx.dialects, taskKey(outcome.task), MODEL_ACCESS_LOST));
    throw new OpenworkRefusal(409, conflict);
  }
  // A claim the desktop keeps: one the model check failed never ran, so it is no step of the prompt's trace.
  if (outcome.kind === "claimed") recordClaim(ctx.tracer, outcome.task, runner);
  return outcome.task;
}

const commandClaim: OpenworkHandler = async (ctx, request, [id]) => {
  const { runner } = await runnerCall(ctx, request, EmptyBodySchema);
  requireCapability(runner, CREATE);
  const task = await claimOfKind(ctx, runner, id!, ["remote_session.create"], COMMAND_LEASE_MS, "command_claim_conflict");
  ctx.logger.info("desktop runner: OpenWork command claimed", { taskId: task.id, runnerId: runner.runnerId });
  return openworkJson(200, {
    assignment: {
      commandId: task.id,
      kind: "remote_session_create",
      title: task.title,
      prompt: task.prompt,
      model: task.model ? { providerId: task.model.providerId, modelId: task.model.modelId, variant: task.model.variant ?? null } : null,
      expiresAt: task.claim_deadline.getTime(),
      ...(task.workspace_id ? { workspaceId: task.workspace_id } : {}),
    },
  });
};

const commandComplete: OpenworkHandler = async (ctx, request, [id]) => {
  const { runner, body } = await runnerCall(ctx, request, CommandCompleteSchema);
  requireCapability(runner, CREATE);
  const receipt =
    body.status === "delivered"
      ? { status: body.status, sessionId: body.sessionId, workspaceId: body.workspaceId, resultSummary: body.resultSummary ?? null }
      : { status: body.status, error: body.error, resultSummary: body.resultSummary ?? null };
  await tracedPost(ctx, "desktop complete", runner, id!, () =>
    orConflict(409, "command_complete_conflict", () => transaction(ctx, (tx, hints) => receiveCommand(tx, hints, ctx.dialects, runner, id!, receipt))),
  );
  const delivered = body.status === "delivered";
  return openworkJson(200, {
    command: { id, status: body.status, sessionId: delivered ? body.sessionId : null, workspaceId: delivered ? body.workspaceId : null },
  });
};

const commandSession: OpenworkHandler = async (ctx, request, [id]) => {
  const { runner, body } = await runnerCall(ctx, request, SessionReportSchema);
  requireCapability(runner, CREATE);
  try {
    await tracedPost(ctx, "desktop progress", runner, id!, () => transaction(ctx, (tx, hints) => receiveProgress(tx, hints, ctx.dialects, runner, id!, body)));
  } catch (error) {
    if (error instanceof ChannelRefusal)
      throw new OpenworkRefusal(error.code === "not_found" ? 404 : 409, error.code === "not_found" ? "command_not_found" : "command_session_conflict");
    throw error;
  }
  return openworkJson(200, { ok: true });
};

const pending: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, null);
  return openworkJson(200, { items: (await workItems(ctx, runner)).filter((item) => item.kind === "remote_session_request") });
};

const requestClaim: OpenworkHandler = async (ctx, request, [id]) => {
  const { runner } = await runnerCall(ctx, request, EmptyBodySchema);
  requireCapability(runner, CONTROL);
  const task = await claimOfKind(
    ctx,
    runner,
    id!,
    ["remote_session.send", "remote_session.read", "remote_session.stop"],
    REQUEST_LEASE_MS,
    "request_claim_conflict",
  );
  const [session] = await ctx.sql<{ target_session_id: string | null; target_ref: Record<string, unknown>; engine: string | null }[]>`
    select s.target_session_id, s.target_ref, c.progress->>'engine' as engine
    from remote_session s
    left join desktop_task c on c.organization_id = s.organization_id and c.session_id = s.id and c.kind = 'remote_session.create'
    where s.organization_id = ${task.organization_id} and s.id = ${task.session_id}`;
  const action = task.kind.slice("remote_session.".length);
  const input =
    task.kind === "remote_session.send"
      ? { prompt: task.prompt ?? "", messageId: task.message_id, model: task.model ? { ...task.model, variant: task.model.variant ?? null } : null }
      : (task.input ?? {});
  return openworkJson(200, {
    assignment: {
      requestId: task.id,
      kind: "remote_session_request",
      commandId: session?.target_ref.commandId ?? null,
      sessionId: task.local_session_id ?? session?.target_session_id ?? null,
      workspaceId: task.workspace_id ?? session?.target_ref.workspaceId ?? null,
      engine: session?.engine ?? null,
      expiresAt: task.claim_deadline.getTime(),
      action,
      input,
    },
  });
};

const requestComplete: OpenworkHandler = async (ctx, request, [id]) => {
  const { runner, body } = await runnerCall(ctx, request, RequestCompleteSchema);
  requireCapability(runner, CONTROL);
  if (body.status === "done") {
    if (Buffer.byteLength(JSON.stringify(body.outcome)) > OUTCOME_LIMIT_BYTES)
      throw new OpenworkRefusal(400, "invalid_request", "the outcome is larger than 256 KiB");
    const parsed = RequestResultSchemas[body.outcome.action].safeParse(body.outcome.result);
    if (!parsed.success) throw new OpenworkRefusal(400, "invalid_request", `the ${body.outcome.action} result does not match the protocol`);
  }
  const task = await tracedPost(ctx, "desktop complete", runner, id!, () =>
    orConflict(409, "request_complete_conflict", () => transaction(ctx, (tx, hints) => receiveRequest(tx, hints, ctx.dialects, runner, id!, body))),
  );
  return openworkJson(200, { request: { id: task.id, status: body.status } });
};

/**
 * An OpenWork runner's work: relayed requests first (at most 5), then commands (at most 5), each
 * with a recovery holder's own claims first, as den-api lists them; a runner without the remote-session capabilities sees none (and never an
 * item without `runId` it would not understand).
 */
async function workItems(
  ctx: OpenworkContext,
  runner: AuthenticatedRunner,
): Promise<({ kind: "remote_session_request"; requestId: string } | { kind: "remote_session_create"; commandId: string })[]> {
  if (!runner.capabilities.some((c) => Object.values(OPENWORK_KIND_CAPABILITY).includes(c))) return [];
  const items = [...(await recoverableClaims(ctx, runner)), ...(await listWork(ctx.sql, runner))];
  const requests = items.filter((i) => i.kind !== "remote_session.create").slice(0, 5);
  const creates = items.filter((i) => i.kind === "remote_session.create").slice(0, 5);
  return [
    ...requests.map((i) => ({ kind: "remote_session_request" as const, requestId: i.taskId })),
    ...creates.map((i) => ({ kind: "remote_session_create" as const, commandId: i.taskId })),
  ];
}

/**
 * A desktop with a recovery journal sees its own claims again, first, until they expire (den-api's
 * "sticky" claims): one whose claim answer was lost takes the same assignment back.
 */
async function recoverableClaims(ctx: OpenworkContext, runner: AuthenticatedRunner): Promise<{ taskId: string; kind: TaskKind }[]> {
  if (!runner.capabilities.includes(RECOVERY)) return [];
  const rows = await ctx.sql<{ id: string; kind: TaskKind }[]>`
    select id, kind from desktop_task
    where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and claimed_by_runner_id = ${runner.runnerId}
      and claimed_via = ${runner.dialect.name} and ${leaving(ctx.sql, "reclaim")} and claim_deadline > now() and kind = any(${kindsRunnerTakes(runner.dialect, runner)}::text[])
    order by created_at limit 10`;
  return rows.map((row) => ({ taskId: row.id, kind: row.kind }));
}

export const OPENWORK_SESSION_ROUTES = {
  routes: [
    ["POST", "/v1/remote-session-commands/:id/claim", commandClaim],
    ["POST", "/v1/remote-session-commands/:id/complete", commandComplete],
    ["POST", "/v1/remote-session-commands/:id/session", commandSession],
    ["GET", "/v1/remote-session-requests/pending", pending],
    ["POST", "/v1/remote-session-requests/:id/claim", requestClaim],
    ["POST", "/v1/remote-session-requests/:id/complete", requestComplete],
  ] as readonly OpenworkRoute[],
  workItems,
};
