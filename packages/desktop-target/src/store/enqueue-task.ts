import { trace } from "@opentelemetry/api";
import { type LedgerSession, type MemberScope, type Model, newId } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import { formatTraceparent } from "@openwork/remote-session-core/internal";
import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import type { WakeNotice } from "../wake/channels.js";
import type { Hints } from "../wake/hints.js";
import type { TaskKind, TaskRow } from "./task-row.js";
import { movedTo } from "./task-state-sql.js";

export interface NewTask {
  sessionId: string;
  kind: TaskKind;
  title: string;
  prompt: string | null;
  model: Model | null;
  workspaceId: string | null;
  /** A create to run in a fresh git worktree of the workspace (its requirements then include `worktree_v1`). */
  worktree?: boolean;
  messageId: string | null;
  localSessionId: string | null;
  pinnedRunnerId: string | null;
  /** What the runner must have: our protocol's requirements, or OpenWork's capability for a relayed request. */
  requirements: TaskRequirements | { protocolVersion: number; capabilities: string[] };
  /** Store-and-forward: the caller's absolute deadline. */
  deliverBy: Date | null;
  /** How long the task waits for a runner without `deliverBy`, from now on the database clock. */
  claimWithinMs: number;
  /** A relayed read's or stop's input; a respond's request id and answer. */
  input?: Record<string, unknown>;
}

/** A task for the desktop holding `session` that is not a turn: a relayed read or stop, an answer. */
export function holderTask(
  session: LedgerSession,
  task: Pick<NewTask, "kind" | "requirements" | "claimWithinMs"> & { input: Record<string, unknown> },
): NewTask {
  return {
    sessionId: session.id,
    title: session.title,
    prompt: null,
    model: null,
    workspaceId: typeof session.targetRef.workspaceId === "string" ? session.targetRef.workspaceId : null,
    messageId: null,
    localSessionId: session.targetSessionId,
    pinnedRunnerId: String(session.targetRef.runnerId),
    deliverBy: null,
    ...task,
  };
}

/**
 * Inserts a queued task and its wake-up hint; listeners are told once the transaction commits
 * (run it in the `transaction()` that creates the task). The notice carries ids only.
 */
export async function enqueueTask(sql: Queryable, hints: Hints, scope: MemberScope, task: NewTask): Promise<TaskRow> {
  const [row] = await sql<TaskRow[]>`
    insert into desktop_task (
      id, organization_id, member_id, session_id, kind, state, title, prompt, prompt_chars, model, workspace_id, worktree,
      message_id, local_session_id, pinned_runner_id, required_protocol, required_capabilities,
      deliver_by, claim_deadline, input, trace_parent)
    values (
      ${newId("rst")}, ${scope.organizationId}, ${scope.memberId}, ${task.sessionId}, ${task.kind}, ${movedTo(sql, "enqueue")},
      ${task.title}, ${task.prompt}, ${task.prompt?.length ?? 0}, ${task.model ? sql.json(task.model) : null}, ${task.workspaceId},
      ${task.worktree ?? false}, ${task.messageId}, ${task.localSessionId}, ${task.pinnedRunnerId}, ${task.requirements.protocolVersion},
      ${task.requirements.capabilities}::text[], ${task.deliverBy},
      coalesce(${task.deliverBy}::timestamptz, now() + make_interval(secs => ${task.claimWithinMs / 1000})),
      ${task.input ? sql.json(task.input as never) : null},
      -- The active span's (the capability call's), when a host records traces.
      ${formatTraceparent(trace.getActiveSpan()?.spanContext())})
    returning *`;
  await wakeRunners(sql, hints, row!);
  return row!;
}

/**
 * The task a create queued for `sessionId`, if one did. A session gets one create task however
 * often its create is retried: the attempt that queues it takes the reserved ledger row in the
 * same transaction, under that row's lock.
 */
export async function findCreateTask(sql: Queryable, organizationId: string, sessionId: string): Promise<TaskRow | null> {
  const [row] = await sql<TaskRow[]>`
    select * from desktop_task
    where organization_id = ${organizationId} and session_id = ${sessionId} and kind = 'remote_session.create'
    limit 1`;
  return row ?? null;
}

/** Records a wake-up hint for the task's runner(s); every gateway process is told after the commit. */
export async function wakeRunners(
  sql: Queryable,
  hints: Hints,
  task: Pick<TaskRow, "id" | "organization_id" | "member_id" | "pinned_runner_id">,
): Promise<void> {
  const [wake] = await sql<{ id: string }[]>`
    insert into desktop_wake (organization_id, member_id, runner_id, task_id)
    values (${task.organization_id}, ${task.member_id}, ${task.pinned_runner_id}, ${task.id})
    returning id`;
  const notice: WakeNotice = { w: Number(wake!.id), o: task.organization_id, m: task.member_id, r: task.pinned_runner_id, t: task.id };
  hints.wake(notice);
}
