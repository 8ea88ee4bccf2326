import { type LedgerSession, type ReadResult, SESSION_LIMITS, type TargetCall } from "@openwork/remote-session-core";
import type { PendingInput, ReadInput, SessionState, StopOutcome, ToolCallSummary } from "@openwork/remote-session-core/internal";
import { boundText, pendingInput } from "@openwork/remote-session-core/target";
import { decodeRelayCursor, encodeRelayCursor } from "./relay-cursor.js";
import { settled, type TaskWaitDeps } from "../../await-task.js";
import { type DesktopErrorCode, fail } from "../../desktop-errors.js";
import type { RelayedReadResult } from "./openwork-wire.js";
import { enqueueTask, holderTask } from "../../store/enqueue-task.js";
import type { TaskKind, TaskRow } from "../../store/task-row.js";
import { stateIn } from "../../store/task-state-sql.js";
import { OPEN_TASK_STATES } from "../../task-state.js";
import { transaction } from "../../store/transaction.js";

/** How long a relayed request waits for its desktop to pick it up (OpenWork's request TTL). */
const REQUEST_TTL_MS = 2 * 60_000;
const STATUS_STATE: Record<RelayedReadResult["status"], SessionState> = { running: "running", waiting: "waiting_input", idle: "idle", error: "failed" };
const TOOL_STATUS = new Set<ToolCallSummary["status"]>(["pending", "running", "completed", "error"]);
// The desktop's own failure codes that name a condition we have a code for.
const RELAY_FAILURES: Record<string, DesktopErrorCode> = { unknown_session: "unknown_session", invalid_cursor: "invalid_capability_arguments" };

/** What a relayed read or stop needs: the store, the wake hub, how long the call waits. */
export type RelayDeps = TaskWaitDeps;

/**
 * A read of a session on an OpenWork desktop: the desktop keeps the transcript, so the read is a
 * request to it (the same input waiting already is reused), answered within `deps.waitMs` or
 * reported `pending` for the caller to read again. Cursors carry the desktop's own. The answer is
 * handed to one reader and dropped (`takeAnswer`): a reader who finds it taken by another reader of
 * the same question asks again, once.
 */
export async function relayRead(deps: RelayDeps, call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult> {
  const { theirs, pending } = decodeRelayCursor(session.id, input.cursor);
  const request = { from: theirs === null && input.cursor === undefined ? (input.from ?? "start") : "start", cursor: theirs, limit: input.limit } as const;
  // A cursor handed out with a pending answer takes that answer; else the same question waiting is reused.
  const earlier = pending ? await pendingRequest(deps, session, pending) : undefined;
  let asked = earlier ?? (await requestOf(deps, call, session, "remote_session.read", request));
  for (let again = false; ; again = true) {
    const task = await settled(deps, session.id, asked, call.signal);
    if (!task) return pendingRead(session, theirs, asked.id);
    const result = task.state === "done" ? await takeAnswer(deps, task) : (answerOf(task, "read") as RelayedReadResult);
    if (result) return readResultOf(session, input, request, theirs, result);
    if (again) return pendingRead(session, theirs, asked.id);
    asked = await requestOf(deps, call, session, "remote_session.read", request);
  }
}

/** A desktop's read answer as the read's result. */
function readResultOf(
  session: LedgerSession,
  input: ReadInput,
  request: { from: "start" | "end" },
  theirs: string | null,
  result: RelayedReadResult,
): ReadResult {
  const messages = result.messages.map((m) => ({
    id: m.id,
    role: m.role,
    ...boundText(m.text),
    toolCalls: m.toolCalls.map((t) => ({
      id: t.id,
      name: t.name,
      status: TOOL_STATUS.has(t.status as ToolCallSummary["status"]) ? (t.status as ToolCallSummary["status"]) : "pending",
      ...((t.error ?? t.output ?? t.input) ? { summary: (t.error ?? t.output ?? t.input)! } : {}),
    })),
    createdAt: new Date(m.createdAt ?? Date.now()).toISOString(),
  }));
  const last = messages.at(-1);
  // The latest turn is over and this slice holds its last message: that is the final reply.
  const final = result.status === "idle" && last?.role === "assistant" && last.text ? last.text : undefined;
  // A page from the end comes backward: its `nextCursor` points at older messages, while the
  // read's cursor goes on after its newest one.
  const backward = request.from === "end";
  return {
    sessionId: session.id,
    target: "desktop",
    state: session.state === "queued" ? "queued" : STATUS_STATE[result.status],
    title: session.title,
    messages,
    cursor: encodeRelayCursor(session.id, { theirs: backward ? (last?.id ?? theirs) : (result.nextCursor ?? last?.id ?? theirs) }),
    hasMore: !backward && result.nextCursor !== null && messages.length >= input.limit,
    ...(final ? { finalAssistantText: boundText(final, SESSION_LIMITS.finalText).text } : {}),
    ...(result.lastError ? { lastError: { error: result.lastError.code, message: result.lastError.message } } : {}),
    ...(result.status === "waiting" ? { pending: inAppRequest(result.waitingFor ?? "permission") } : {}),
  };
}

/**
 * What an OpenWork desktop's turn waits on. It says only the kind (its engine's pending lists are
 * not relayed, and it takes no answers from the gateway), so the person at the desktop answers.
 */
function inAppRequest(kind: "permission" | "question"): PendingInput {
  return pendingInput({
    kind,
    id: `openwork_${kind}`,
    title: kind === "permission" ? "Permission requested" : "Question asked",
    detail: `The session waits for ${kind === "permission" ? "a permission" : "an answer"} on the desktop; only the person there can give it, in the OpenWork app.`,
    inAppOnly: true,
  });
}

/** A stop of a session on an OpenWork desktop: a request to it, answered within `deps.waitMs`. */
export async function relayStop(deps: RelayDeps, call: TargetCall, session: LedgerSession): Promise<StopOutcome> {
  const task = await settled(deps, session.id, await requestOf(deps, call, session, "remote_session.stop", { messageId: null }), call.signal);
  // Not answered yet: the request stays, and the desktop stops the turn when it picks it up.
  if (!task) return { sessionId: session.id, stopped: false };
  const { stopped } = answerOf(task, "stop") as { stopped: boolean };
  return { sessionId: session.id, stopped, ...(stopped ? { sessionState: "stopped" as const } : {}) };
}

/** The waiting request of this kind and input, or a new one for the desktop that holds the session. */
async function requestOf(deps: RelayDeps, call: TargetCall, session: LedgerSession, kind: TaskKind, input: Record<string, unknown>): Promise<TaskRow> {
  return transaction(deps, async (tx, hints) => {
    const [open] = await tx<TaskRow[]>`
      select * from desktop_task
      where organization_id = ${session.organizationId} and session_id = ${session.id} and kind = ${kind} and ${stateIn(tx, OPEN_TASK_STATES)}
        and input = ${tx.json(input as never)} and claim_deadline > now()
      order by created_at desc limit 1`;
    if (open) return open;
    return enqueueTask(
      tx,
      hints,
      call,
      holderTask(session, { kind, requirements: { protocolVersion: 1, capabilities: ["remote_session_control_v1"] }, claimWithinMs: REQUEST_TTL_MS, input }),
    );
  });
}

/**
 * Takes a read's answer off its task, once: the first reader gets it and the row keeps nothing of
 * it (null when another reader took it, or the sweeper dropped it unread).
 */
async function takeAnswer(deps: RelayDeps, task: TaskRow): Promise<RelayedReadResult | null> {
  const [row] = await deps.sql<{ answer: RelayedReadResult }[]>`
    with taken as (
      select organization_id, id, answer from desktop_task
      where organization_id = ${task.organization_id} and id = ${task.id} and answer is not null
      for update)
    update desktop_task d set answer = null from taken
    where d.organization_id = taken.organization_id and d.id = taken.id
    returning taken.answer`;
  return row?.answer ?? null;
}

/** The desktop's answer, or its refusal as a session error. */
function answerOf(task: TaskRow, action: string): Record<string, unknown> {
  if (task.state === "done") return (task.completion as { outcome: { result: Record<string, unknown> } }).outcome.result;
  if (task.state === "failed") {
    const code = task.failure_code ?? "request_failed";
    return fail(
      RELAY_FAILURES[code] ?? "desktop_request_failed",
      `the desktop could not ${action} the session (${code}): ${task.failure_message ?? "no reason given"}`,
    );
  }
  return fail("desktop_request_expired", `the desktop did not answer the ${action} within 2 minutes; it may be asleep — try again`);
}

/** A read request of this session, still answerable (not expired long ago). */
async function pendingRequest(deps: RelayDeps, session: LedgerSession, requestId: string): Promise<TaskRow | undefined> {
  const [task] = await deps.sql<TaskRow[]>`
    select * from desktop_task
    where organization_id = ${session.organizationId} and id = ${requestId} and session_id = ${session.id} and kind = 'remote_session.read'`;
  return task;
}

function pendingRead(session: LedgerSession, theirs: string | null, requestId: string): ReadResult {
  return {
    sessionId: session.id,
    target: "desktop",
    state: session.state,
    title: session.title,
    messages: [],
    cursor: encodeRelayCursor(session.id, { theirs, pending: requestId }),
    hasMore: false,
    awaitingTarget: true,
    fields: { deferred: { requestId, note: "The desktop has not answered yet; read again with this cursor to get its answer." } },
  };
}
