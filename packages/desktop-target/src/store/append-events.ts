import { isDeepStrictEqual } from "node:util";
import type { SpendDelta } from "@openwork/remote-session-core";
import type { Queryable, SessionPatch } from "@openwork/remote-session-core/internal";
import type { PostEventsRequest, PostEventsResponse, TaskEvent } from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import { assertAttemptHeld, type HeldEvents, lockOwnTask } from "./lock-own-task.js";
import { type LiveState, syncSessionState } from "./sync-session-state.js";
import { emptyFold, foldEvents, type TaskFold } from "../transcript/task-fold.js";
import { endedClears, type RowKey, type RunnerIdentity, sessionKey, type TaskRow, taskKey } from "./task-row.js";
import { leaving, movedTo } from "./task-state-sql.js";
import { pauseAtBudget } from "./pause-at-budget.js";
import { pipeline } from "./pipeline.js";
import type { Hints } from "../wake/hints.js";
import type { DialectSet } from "../dialects/dialect-set.js";

/** What one task's events may take at most (JSON bytes, every attempt together): 4 MiB. */
export const MAX_TASK_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Appends a batch of events to the runner's attempt. Events already held must be replayed
 * unchanged (accepted, not stored twice); a changed replay is `event_conflict`, a gap is
 * `sequence_gap`. The batch is checked whole before anything is written, and folded into the
 * task's transcript state. A batch that would take the task's events past `capBytes` is not
 * stored: the turn ends `failed` (`turn_too_large`) with what it had, and null is returned (the
 * route answers 413 `turn_too_large`, after the commit). Runs in a transaction.
 */
export async function appendEvents(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  runner: RunnerIdentity,
  taskId: string,
  body: PostEventsRequest,
  capBytes = MAX_TASK_EVENT_BYTES,
): Promise<PostEventsResponse | null> {
  // The task's lock and the events it holds, in one statement.
  const key = { organizationId: runner.organizationId, id: taskId };
  const { task, held } = await lockOwnTask(tx, runner, taskId, body);
  assertAttemptHeld(task, body.attempt, "renew");
  const { fresh, nextSequence } = freshEvents(body.events, held);
  let paused = false;
  if (fresh.length > 0) {
    const grown = await grownFold(tx, task, fresh, capBytes);
    if (!grown) {
      await endTooLarge(tx, hints, dialects, task, capBytes);
      return null;
    }
    await pipeline([insertEvents(tx, key, body.attempt, fresh).execute(), storeFold(tx, key, grown).execute()]);
    const { patch, live, askedAgain } = await sessionEffects(tx, key, fresh);
    await syncSessionState(tx, hints, dialects, sessionKey(task), patch, live, askedAgain);
    paused = await pauseAtBudget(tx, hints, sessionKey(task));
  }
  // A stop asked for before this post, or the pause it just opened: the runner stops now.
  return { taskId, attempt: body.attempt, nextSequence, ...(task.cancel_requested || paused ? { cancelRequested: true } : {}) };
}

/** A task's transcript state with new events folded in, and the bytes its events then take. */
export interface GrownFold {
  fold: TaskFold;
  bytes: number;
}

/** A task's fold with `fresh` added, and the bytes its events then take; null past `capBytes`. */
export async function grownFold(tx: Queryable, task: TaskRow, fresh: TaskEvent[], capBytes: number): Promise<GrownFold | null> {
  const bytes = task.event_bytes + fresh.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0);
  if (bytes > capBytes) return null;
  const receivedAt = new Date();
  return {
    fold: foldEvents(
      task.folded ?? (await foldHeld(tx, taskKey(task))),
      fresh.map((event) => ({ event, receivedAt })),
    ),
    bytes,
  };
}

/** Records a grown fold (`grownFold`). */
export function storeFold(tx: Queryable, task: RowKey, grown: GrownFold) {
  return tx`
    update desktop_task set folded = ${tx.json(grown.fold as never)}, event_bytes = ${grown.bytes}
    where organization_id = ${task.organizationId} and id = ${task.id}`;
}

/** The fold of a task from before folding, from the events it holds. */
async function foldHeld(tx: Queryable, task: RowKey): Promise<TaskFold> {
  const rows = await tx<{ event: TaskEvent; received_at: Date }[]>`
    select event, received_at from desktop_task_event
    where organization_id = ${task.organizationId} and task_id = ${task.id} order by attempt, sequence`;
  return foldEvents(
    emptyFold(),
    rows.map((row) => ({ event: row.event, receivedAt: row.received_at })),
  );
}

/** Why a turn was ended for its size. */
export const tooLarge = (capBytes: number) => ({
  code: "turn_too_large",
  message: `the turn's events passed the ${Math.round(capBytes / 1024)} KiB a turn may store; it was ended with what came before`,
});

/** Ends a turn whose events would pass what a task may store: failed, with what it had. */
export async function endTooLarge(tx: Queryable, hints: Hints, dialects: DialectSet, task: TaskRow, capBytes: number): Promise<void> {
  const { message } = tooLarge(capBytes);
  await tx`
    update desktop_task set state = ${movedTo(tx, "fail")}, ${endedClears(tx)}, failure_code = 'turn_too_large', failure_message = ${message},
      finished_at = now(), updated_at = now()
    where organization_id = ${task.organization_id} and id = ${task.id} and ${leaving(tx, "fail")}`;
  await syncSessionState(tx, hints, dialects, sessionKey(task), { activity: true, lastError: { error: "turn_too_large", message } });
}

/**
 * The events of a batch the attempt does not hold yet, after checking the whole batch: replays
 * must be unchanged, and the first new one must follow the last held.
 */
export function freshEvents(events: TaskEvent[], { next, held }: HeldEvents): { fresh: TaskEvent[]; nextSequence: number } {
  const heldBySequence = new Map(held);
  const fresh = events.filter((event) => {
    if (event.sequence >= next) return true;
    if (!isDeepStrictEqual(heldBySequence.get(event.sequence), event)) {
      throw new ChannelRefusal("event_conflict", `event ${event.sequence} differs from the one already received`);
    }
    return false;
  });
  if (fresh.length > 0 && fresh[0]!.sequence !== next) {
    throw new ChannelRefusal("sequence_gap", `expected sequence ${next}, got ${fresh[0]!.sequence}`, { nextSequence: next });
  }
  return { fresh, nextSequence: next + fresh.length };
}

/** `spent` with one reported step's usage added (its cost in micro-dollars, when priced). */
function addUsage(spent: SpendDelta | undefined, usage: { inputTokens: number; outputTokens: number; costMicros?: number | undefined }): SpendDelta {
  const costMicros = usage.costMicros === undefined ? spent?.costMicros : (spent?.costMicros ?? 0) + usage.costMicros;
  return {
    tokensIn: (spent?.tokensIn ?? 0) + usage.inputTokens,
    tokensOut: (spent?.tokensOut ?? 0) + usage.outputTokens,
    ...(costMicros === undefined ? {} : { costMicros }),
  };
}

/**
 * Stores checked events (`freshEvents`). The batch travels as one JSON parameter, so the
 * statement's text is the same for any number of events: one prepared statement and plan per
 * connection, not one per batch size.
 */
export function insertEvents(tx: Queryable, task: RowKey, attempt: number, fresh: TaskEvent[]) {
  const rows = fresh.map((event) => ({ sequence: event.sequence, type: event.type, event }));
  return tx`
    insert into desktop_task_event (organization_id, task_id, attempt, sequence, type, event)
    select ${task.organizationId}, ${task.id}, ${attempt}, e.sequence, e.type, e.event
    from jsonb_to_recordset(${tx.json(rows as never)}) as e(sequence integer, type text, event jsonb)`;
}

/**
 * What new events change on the session: its local id, its live state, its last activity, and
 * whether the batch asks the human again after the turn ran on (`askedAgain`: a request answered,
 * then another asked, within one post).
 */
export async function sessionEffects(
  tx: Queryable,
  task: RowKey,
  events: TaskEvent[],
): Promise<{ patch: Omit<SessionPatch, "state">; live?: LiveState; askedAgain?: true }> {
  const patch: Omit<SessionPatch, "state"> = { activity: true };
  let live: LiveState | undefined;
  let askedAgain = false;
  for (const event of events) {
    if (event.type === "session.bound") {
      patch.targetSessionId = event.payload.localSessionId;
      await tx`update desktop_task set local_session_id = ${event.payload.localSessionId} where organization_id = ${task.organizationId} and id = ${task.id}`;
    }
    if (event.type === "status" && event.payload.status !== "idle") live = event.payload.status;
    // A request waits on the human until resolved; the turn then runs on.
    if (event.type === "input.requested") {
      askedAgain ||= live === "running";
      live = "waiting_input";
    }
    if (event.type === "input.resolved") live = "running";
    // Each step's usage is fresh exactly once (replays are not), so it is added once.
    if (event.type === "usage") patch.spent = addUsage(patch.spent, event.payload);
  }
  if (!live) return { patch };
  return live === "waiting_input" && askedAgain ? { patch, live, askedAgain } : { patch, live };
}
