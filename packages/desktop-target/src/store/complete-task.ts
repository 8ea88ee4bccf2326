import { isDeepStrictEqual } from "node:util";
import type { Queryable, SessionPatch } from "@openwork/remote-session-core/internal";
import type { CompleteRequest, TaskEvent } from "@openwork/runner-protocol/internal";
import type { PendingQuery, Row } from "postgres";
import type { TaskState } from "../task-state.js";
import { ChannelRefusal } from "../channel-refusal.js";
import { freshEvents, grownFold, insertEvents, sessionEffects, tooLarge } from "./append-events.js";
import { assertAttemptHeld, lockOwnTaskAndSession, type OwnTaskAndSession } from "./lock-own-task.js";
import type { LockedSession } from "./sync-session-state.js";
import { endedClears, type RowKey, type TaskOwner, type TaskRow } from "./task-row.js";

/**
 * A settled task: the state it ended in, its writes (not sent yet: `writeSettle` sends them alone,
 * or the next claim's statement carries them), its session locked with the turns as the settle
 * leaves them, and the session's move still to write.
 */
export interface SettledTask {
  state: TaskState;
  writes: SettleWrites;
  session: LockedSession | null;
  patch: Omit<SessionPatch, "state" | "expect">;
}

/** What a settle writes: the attempt's last events, and the task's columns as it ends. */
export interface SettleWrites {
  task: RowKey;
  attempt: number;
  events: TaskEvent[];
  columns: PendingQuery<Row[]>;
}

/**
 * A settle's writes as the CTEs of a statement (`settled_events`, `settled`), for one that does
 * more in the same statement: the next claim names its task in `next_task_id` (`next`).
 */
export function settleCtes(tx: Queryable, { task, attempt, events, columns }: SettleWrites, next?: PendingQuery<Row[]>) {
  // The same text with or without events (an empty batch inserts nothing): one prepared statement.
  return tx`
    settled_events as (${insertEvents(tx, task, attempt, events)}),
    settled as (
      update desktop_task set ${columns}${next ? tx`, next_task_id = ${next}` : tx``}
      where organization_id = ${task.organizationId} and id = ${task.id})`;
}

/** A settle's writes alone, in one statement, sent when it is called. */
export function writeSettle(tx: Queryable, writes: SettleWrites): Promise<unknown> {
  return tx`with ${settleCtes(tx, writes)} select 1`.execute();
}

/**
 * A completion's first step: the task's lock, the events of `body` it already holds, and the lock
 * of the task's session with its turns, in one statement, sent when it is called (one round trip,
 * with whatever the caller started before).
 */
export function lockForCompletion(tx: Queryable, owner: TaskOwner, taskId: string, body: CompleteRequest): Promise<OwnTaskAndSession> {
  return lockOwnTaskAndSession(tx, owner, taskId, body.events ? { attempt: body.attempt, events: body.events } : undefined);
}

/**
 * Whether `body` replays the task's completion. A completion is immutable: the same body again is
 * a replay (even after the lease), a different one is `completion_conflict`. A first completion
 * must come from the attempt that holds the task (`lease_lost`).
 */
export function isReplay(task: TaskRow, body: CompleteRequest): boolean {
  if (task.completion) {
    if (isDeepStrictEqual(task.completion, storedCompletion(body))) return true;
    throw new ChannelRefusal("completion_conflict", "the task was already completed differently");
  }
  assertAttemptHeld(task, body.attempt, "complete");
  return false;
}

/** What a task keeps of its completion: the body without its events and its next claim. */
function storedCompletion(body: CompleteRequest): Omit<CompleteRequest, "events" | "next"> {
  const { events: _, next: __, ...completion } = body;
  return completion;
}

/**
 * Settles the attempt with its last events (protocol 3: one transaction for both), and answers
 * the task's session (locked with the task) with its turns as the settle leaves them. The prompt
 * is cleared: the task no longer needs it. Last events that would take the task past `capBytes`
 * are not stored and the turn ends `failed` (`turn_too_large`). Its writes are returned, not
 * sent: they leave with the caller's next statements, in one round trip (see `completeAndClaim`).
 * One round trip more for each event that binds the session and for a task from before folding
 * (its held events are folded first).
 */
export async function settleTask(tx: Queryable, { task, held, session }: OwnTaskAndSession, body: CompleteRequest, capBytes: number): Promise<SettledTask> {
  const key = { organizationId: task.organization_id, id: task.id };
  const fresh = body.events && held ? freshEvents(body.events, held).fresh : [];
  const grown = fresh.length > 0 ? await grownFold(tx, task, fresh, capBytes) : null;
  // Last events past what the turn may store are not kept: the turn ends failed, with what it had.
  const oversized = fresh.length > 0 && !grown;
  const stored = oversized ? [] : fresh;
  const state = oversized ? "failed" : body.status;
  const effects = stored.length > 0 ? (await sessionEffects(tx, key, stored)).patch : {};
  const failure = oversized ? tooLarge(capBytes) : body.status === "failed" ? body.error : null;
  const localSessionId = body.localSessionId ?? task.local_session_id;
  // A fold, or SQL null to keep the stored one: the statement's text and parameter types are the
  // same either way (postgres.js prepares one statement per text and types).
  const columns = tx`
    folded = coalesce(${tx.json((grown ? grown.fold : null) as never)}, folded), event_bytes = coalesce(${grown?.bytes ?? null}::integer, event_bytes),
    state = ${state}, completion = ${tx.json(storedCompletion(body) as never)}, ${endedClears(tx)},
    local_session_id = ${localSessionId}, failure_code = ${failure?.code ?? null},
    failure_message = ${failure?.message ?? null}, finished_at = now(), updated_at = now()`;
  const patch = {
    ...effects,
    activity: true,
    lastError: failure ? { error: failure.code, message: failure.message } : null,
    ...(localSessionId ? { targetSessionId: localSessionId } : {}),
  };
  // The turns were read with the task's lock, before this settle: this turn now ends in `state`.
  const settled = session && { ...session, tasks: session.tasks.map((turn) => (turn.id === task.id ? { ...turn, state } : turn)) };
  return { state, writes: { task: key, attempt: body.attempt, events: stored, columns }, session: settled, patch };
}
