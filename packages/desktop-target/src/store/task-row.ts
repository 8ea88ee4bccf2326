import type { Model } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { WorkKind } from "@openwork/runner-protocol";
import type { CompleteRequest } from "@openwork/runner-protocol/internal";
import type { TaskState } from "../task-state.js";
import type { TaskFold } from "../transcript/task-fold.js";
import type { RunnerDialect } from "./runner-row.js";
import type { Dialect } from "../dialects/dialect.js";

/**
 * What a task asks of a desktop: our protocol's work kinds, and the two requests only OpenWork
 * desktops answer (they keep the transcript; reads and stops are relayed to them).
 */
export type TaskKind = WorkKind | "remote_session.read" | "remote_session.stop";

/** A desktop_task row as postgres.js returns it. */
export interface TaskRow {
  id: string;
  organization_id: string;
  member_id: string;
  session_id: string;
  kind: TaskKind;
  state: TaskState;
  title: string;
  prompt: string | null;
  prompt_chars: number;
  model: Model | null;
  workspace_id: string | null;
  /** A create to run in a fresh git worktree of the workspace (the runner needs `worktree_v1`). */
  worktree: boolean;
  message_id: string | null;
  local_session_id: string | null;
  pinned_runner_id: string | null;
  claimed_by_runner_id: string | null;
  required_protocol: number;
  required_capabilities: string[];
  attempt: number;
  lease_expires_at: Date | null;
  deliver_by: Date | null;
  claim_deadline: Date;
  cancel_requested: boolean;
  completion: CompleteRequest | Record<string, unknown> | null;
  /** Which runner channel claimed it. */
  claimed_via: RunnerDialect | null;
  /** A relayed read's or stop's input; a respond's request id and answer. */
  input: Record<string, unknown> | null;
  /** What its events have made so far (null: a task from before folding; fold its events). */
  folded: TaskFold | null;
  /** The JSON bytes its events take, every attempt together. */
  event_bytes: number;
  /** A relayed read's answer, until its reader takes it: never kept beyond that. */
  answer: Record<string, unknown> | null;
  /** The task its completion claimed for the same runner (protocol 3). */
  next_task_id: string | null;
  /** A delivered OpenWork command's latest progress report, and its watermark (desktop clock, ms). */
  progress: Record<string, unknown> | null;
  progress_observed_at: string | null;
  /** The last report's order key: its desktop time, capped by the gateway's clock at arrival (ms). */
  progress_order_at: string | null;
  /** The latest desktop time any report of this turn carried (ms). */
  progress_latest_observed_at: string | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
  claimed_at: Date | null;
  finished_at: Date | null;
  /** The W3C trace context of the call that queued it (migration 0022); null when nobody records traces. */
  trace_parent: string | null;
}

/** The runner a claimed task belongs to: what a verified token names. */
export type TaskOwner = Pick<RunnerIdentity, "organizationId" | "memberId" | "runnerId">;

/** The runner a request comes from, as its verified token says. */
export interface RunnerIdentity {
  organizationId: string;
  memberId: string;
  runnerId: string;
  capabilities: string[];
  protocolVersion: number;
  /** The runner channel it speaks (what authenticated it). */
  dialect: Dialect;
}

/** Names one row by its organization (which leads every key: the tables shard by it) and id. */
export interface RowKey {
  organizationId: string;
  id: string;
}

/** The task's own key. */
export const taskKey = (task: Pick<TaskRow, "organization_id" | "id">): RowKey => ({ organizationId: task.organization_id, id: task.id });

/** The key of the task's session. */
export const sessionKey = (task: Pick<TaskRow, "organization_id" | "session_id">): RowKey => ({ organizationId: task.organization_id, id: task.session_id });

/**
 * What every ended attempt drops, in the update that ends it: the prompt, and a respond's answer
 * (the human's words). Only ids, kinds and sizes outlive the attempt.
 */
export function endedClears(tx: Queryable) {
  return tx`prompt = null, input = input - 'answer'`;
}
