import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { Queryable } from "@openwork/remote-session-core/internal";
import { ChannelRefusal } from "../../channel-refusal.js";
import { syncSessionState } from "../../store/sync-session-state.js";
import { fromStates } from "../../task-state.js";
import { endedClears, type RunnerIdentity, sessionKey, type TaskKind, type TaskRow } from "../../store/task-row.js";
import type { Hints } from "../../wake/hints.js";
import type { DialectSet } from "../dialect-set.js";

// What OpenWork desktops report back over its command protocol, written to the task store: a
// command's delivery, its progress reports, and the answers to relayed requests. Each refusal is
// a ChannelRefusal whose code the OpenWork routes turn into OpenWork's own.

const REQUEST_KINDS: TaskKind[] = ["remote_session.send", "remote_session.read", "remote_session.stop"];

/** A command's receipt: `delivered` with the desktop's session ids, or `failed`. */
export type CommandReceipt =
  | { status: "delivered"; sessionId: string; workspaceId: string; resultSummary?: string | null | undefined }
  | { status: "failed"; error: { code: string; message: string }; resultSummary?: string | null | undefined };

/** A progress report of a delivered command (OpenWork's `/session` body). */
export interface ProgressReport {
  status: "running" | "waiting" | "idle" | "error";
  waitingFor?: "permission" | "question" | null | undefined;
  engine?: "v1" | "v2" | undefined;
  model?: { providerId: string; modelId: string; variant?: string | null | undefined } | null | undefined;
  finalText?: string | undefined;
  error?: { code: string; message: string } | null | undefined;
  messageCount?: number | undefined;
  observedAt: number;
}

/** A relayed request's receipt. */
export type RequestReceipt =
  | { status: "done"; outcome: { action: string; result: Record<string, unknown> } }
  | { status: "failed"; error: { code: string; message: string } };

/** Locks one of the runner's own tasks of these kinds; anything else is `not_found`. */
async function lockOwn(tx: Queryable, runner: RunnerIdentity, taskId: string, kinds: TaskKind[]): Promise<TaskRow> {
  const [task] = await tx<TaskRow[]>`
    select * from desktop_task
    where id = ${taskId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
      and claimed_by_runner_id = ${runner.runnerId} and kind = any(${kinds}::text[])
    for update`;
  if (!task) throw new ChannelRefusal("not_found", "no such task");
  return task;
}

/**
 * Settles a claimed task with an OpenWork receipt. Immutable: the same receipt again is accepted
 * (a lost answer), a different one is a conflict. A receipt after the lease lapsed is accepted
 * as OpenWork accepts it (the desktop did the work). A read's answer (the desktop's transcript) is
 * not kept: it waits in `answer` for its reader only, and the completion holds its digest.
 */
async function settle(
  tx: Queryable,
  task: TaskRow,
  receipt: object,
  outcome: { failed: { code: string; message: string } | null; localSessionId?: string },
): Promise<boolean> {
  const { kept, answer } = keptReceipt(task.kind, receipt);
  if (task.completion) {
    if (isDeepStrictEqual(task.completion, kept)) return false;
    throw new ChannelRefusal("completion_conflict", "the task was already completed differently");
  }
  if (!fromStates("deliver").includes(task.state)) throw new ChannelRefusal("completion_conflict", `the task is ${task.state}`);
  await tx`
    update desktop_task set
      state = ${outcome.failed ? "failed" : "done"}, completion = ${tx.json(kept as never)}, ${endedClears(tx)},
      answer = ${answer ? tx.json(answer as never) : null},
      local_session_id = coalesce(${outcome.localSessionId ?? null}, local_session_id),
      failure_code = ${outcome.failed?.code ?? null}, failure_message = ${outcome.failed?.message ?? null},
      finished_at = now(), updated_at = now()
    where organization_id = ${task.organization_id} and id = ${task.id}`;
  return true;
}

/** What the completion keeps of a receipt: a read's result only as its digest (the result is handed on, in `answer`). */
function keptReceipt(kind: TaskKind, receipt: object): { kept: object; answer: Record<string, unknown> | null } {
  const { outcome } = receipt as { outcome?: { action: string; result: Record<string, unknown> } };
  if (kind !== "remote_session.read" || !outcome) return { kept: receipt, answer: null };
  const digest = createHash("sha256").update(JSON.stringify(outcome.result)).digest("base64url");
  return { kept: { status: "done", outcome: { action: outcome.action, digest } }, answer: outcome.result };
}

/** `complete` of a command: the session now lives on the desktop (delivered) or never started (failed). */
export async function receiveCommand(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  runner: RunnerIdentity,
  commandId: string,
  receipt: CommandReceipt,
): Promise<TaskRow> {
  const task = await lockOwn(tx, runner, commandId, ["remote_session.create"]);
  const failed = receipt.status === "failed" ? receipt.error : null;
  const changed = await settle(tx, task, receipt, { failed, ...(receipt.status === "delivered" ? { localSessionId: receipt.sessionId } : {}) });
  if (changed) {
    await syncSessionState(tx, hints, dialects, sessionKey(task), {
      activity: true,
      lastError: failed ? { error: failed.code, message: failed.message } : null,
      ...(receipt.status === "delivered" ? { targetSessionId: receipt.sessionId, targetRef: { workspaceId: receipt.workspaceId } } : {}),
    });
  }
  return task;
}

/**
 * A progress report of a delivered command: applied only when newer than the last one, an equal
 * `observedAt` acknowledged unchanged, an older one refused. "Newer" is judged on the desktop's
 * clock capped by the gateway's (`orderOf`): a desktop whose clock ran ahead and was corrected is
 * still heard (its corrected reports are later than the gateway's time of the ones before), and a
 * late replay of a report stamped ahead of the gateway's clock, no later than what the turn already
 * saw, is acknowledged without change. `engine` and `model` are sticky; `waitingFor` is kept only
 * while waiting.
 */
export async function receiveProgress(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  runner: RunnerIdentity,
  commandId: string,
  report: ProgressReport,
): Promise<TaskRow> {
  const [task] = await tx<(TaskRow & { now_ms: string })[]>`
    select *, (extract(epoch from clock_timestamp()) * 1000)::bigint as now_ms from desktop_task
    where id = ${commandId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
      and kind = 'remote_session.create'
    for update`;
  if (!task) throw new ChannelRefusal("not_found", "no such command");
  if (!fromStates("report").includes(task.state) || task.claimed_by_runner_id !== runner.runnerId || task.claimed_via !== "openwork") {
    throw new ChannelRefusal("claim_conflict", "the command is not a session this desktop delivered");
  }
  const order = progressOrder(task, report.observedAt, Number(task.now_ms));
  if (order === "stale") throw new ChannelRefusal("claim_conflict", "an older report");
  if (order === "replay") return task;
  const previous = task.progress ?? {};
  const progress = {
    status: report.status,
    waitingFor: report.status === "waiting" ? (report.waitingFor ?? null) : null,
    engine: report.engine ?? previous.engine ?? null,
    model: report.model === undefined ? (previous.model ?? null) : report.model,
    // The desktop's reply is its own: only its size is kept (a read asks the desktop for the text).
    finalTextChars: report.finalText?.length ?? null,
    error: report.error ?? null,
    messageCount: report.messageCount ?? previous.messageCount ?? null,
    observedAt: report.observedAt,
  };
  await tx`
    update desktop_task set
      progress = ${tx.json(progress as never)}, progress_observed_at = ${report.observedAt}, updated_at = now(),
      progress_order_at = ${Math.min(report.observedAt, Number(task.now_ms))},
      progress_latest_observed_at = greatest(progress_latest_observed_at, ${report.observedAt})
    where organization_id = ${runner.organizationId} and id = ${commandId}`;
  const error = report.status === "error" ? (report.error ?? { code: "desktop_error", message: "the desktop reported an error" }) : null;
  await syncSessionState(tx, hints, dialects, sessionKey(task), { activity: true, lastError: error ? { error: error.code, message: error.message } : null });
  return task;
}

/** Where a report stands against the turn's last one: news to apply, a replay to acknowledge, or stale. */
export function progressOrder(
  last: Pick<TaskRow, "progress_observed_at" | "progress_order_at" | "progress_latest_observed_at">,
  observedAt: number,
  nowMs: number,
): "news" | "replay" | "stale" {
  if (last.progress_observed_at === null) return "news";
  if (observedAt === Number(last.progress_observed_at)) return "replay";
  // Stamped ahead of our clock, and no later than a report already seen: sent again, not new.
  if (observedAt > nowMs && observedAt <= Number(last.progress_latest_observed_at ?? last.progress_observed_at)) return "replay";
  const order = Number(last.progress_order_at ?? last.progress_observed_at);
  return Math.min(observedAt, nowMs) >= order ? "news" : "stale";
}

/**
 * The answer to a relayed request (read, send, stop). An accepted follow-up (`send`, not already
 * present) starts a new turn: the command's progress goes back to `running` and its watermark is
 * cleared, so the previous answer is never read as this turn's.
 */
export async function receiveRequest(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  runner: RunnerIdentity,
  requestId: string,
  receipt: RequestReceipt,
): Promise<TaskRow> {
  const task = await lockOwn(tx, runner, requestId, REQUEST_KINDS);
  if (receipt.status === "done" && `remote_session.${receipt.outcome.action}` !== task.kind) {
    throw new ChannelRefusal("completion_conflict", "the outcome answers another action");
  }
  const failed = receipt.status === "failed" ? receipt.error : null;
  if (!(await settle(tx, task, receipt, { failed }))) return task;
  const newTurn = receipt.status === "done" && task.kind === "remote_session.send" && receipt.outcome.result.alreadyPresent === false;
  // A stop the desktop accepted ends the turn now, whichever comes first: this answer, or the
  // desktop's report of the aborted turn (which then stays on the command only). The watermark
  // is kept, so that report, newer, is still taken as data.
  if (receipt.status === "done" && task.kind === "remote_session.stop" && receipt.outcome.result.stopped === true) {
    await tx`
      update desktop_task set progress = coalesce(progress, '{}'::jsonb) || '{"status":"stopped"}'::jsonb, updated_at = now()
      where organization_id = ${task.organization_id} and session_id = ${task.session_id} and kind = 'remote_session.create'`;
  }
  if (newTurn) {
    await tx`
      update desktop_task set
        progress = jsonb_build_object('status', 'running', 'engine', progress->'engine', 'model', progress->'model'),
        progress_observed_at = null, progress_order_at = null, progress_latest_observed_at = null, updated_at = now()
      where organization_id = ${task.organization_id} and session_id = ${task.session_id} and kind = 'remote_session.create'`;
  }
  await syncSessionState(tx, hints, dialects, sessionKey(task), { activity: true, ...(newTurn ? { lastError: null } : {}) });
  return task;
}
