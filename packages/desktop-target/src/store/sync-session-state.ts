import { createSessionLedger, type Queryable, type SessionPatch, type SessionState, statesLeadingTo } from "@openwork/remote-session-core";
import { SESSION_CHANNEL } from "../wake/channels.js";
import { type TaskState, toSessionState } from "../task-state.js";
import { notifySession } from "./notify-session.js";

/** What a live (claimed) turn may report of itself through status events. */
export type LiveState = "running" | "waiting_input";

/**
 * Where a desktop session stands, from its tasks (newest first): a claimed turn is running (or
 * waiting for the human, as it reported), else a queued one is queued, else the latest task's
 * outcome — a follow-up that was never delivered leaves the session ready. The one place a
 * desktop session's state is decided, so a follow-up queued behind a running turn can never read
 * `idle` when that turn ends.
 */
export function deriveSessionState(tasks: DerivationTask[], current: SessionState, live?: LiveState): SessionState {
  if (tasks.some((t) => t.state === "claimed")) return live ?? (current === "waiting_input" ? current : "running");
  if (tasks.some((t) => t.state === "queued")) return "queued";
  const latest = tasks[0];
  if (!latest) return current;
  // An OpenWork desktop completes a turn's task once it has it; the turn itself then runs on the
  // desktop, and the command's progress reports say where it stands.
  const command = tasks.find((t) => t.kind === "remote_session.create");
  if (latest.state === "done" && command?.claimed_via === "openwork") return PROGRESS_STATE[command.progress ?? "running"] ?? "running";
  return latest.state === "expired" && latest.kind !== "remote_session.create" ? "idle" : toSessionState(latest.state);
}

/**
 * What `deriveSessionState` answers the moment a turn is claimed (a claimed turn means running,
 * and a session waiting for the human stays so), written without reading the turns first: the
 * claim's one-statement session move. Also refuses, like the ledger, a move the table forbids.
 */
export async function moveClaimedSession(tx: Queryable, sessionId: string, targetRef: Record<string, unknown> | null): Promise<{ targetSessionId: string | null }> {
  const [moved] = await tx<{ target_session_id: string | null }[]>`
    with moved as (
      update remote_session set
        state = case when state = 'waiting_input' then state else 'running' end,
        target_ref = target_ref || ${tx.json((targetRef ?? {}) as never)}, last_activity_at = now(), updated_at = now()
      where id = ${sessionId} and state = any(${statesLeadingTo("running")}::text[])
      returning id, target_session_id),
    notified as (select pg_notify(${SESSION_CHANNEL}, id) from moved)
    select target_session_id, (select count(*) from notified) as notified from moved`;
  if (!moved) throw new Error(`desktop session ${sessionId}: the ledger refused a claimed turn's move to running`);
  return { targetSessionId: moved.target_session_id };
}

/** A session's turn (create or follow-up) as the derivation reads it. */
export interface DerivationTask {
  state: TaskState;
  kind: string;
  claimed_via?: string | null;
  /** A delivered OpenWork command's reported status. */
  progress?: string | null;
}

// `lost` is the sweeper's: the desktop has not been seen for the presence window mid-turn.
const PROGRESS_STATE: Record<string, SessionState> = { running: "running", waiting: "waiting_input", idle: "idle", error: "failed", lost: "interrupted" };

/**
 * Records the session's derived state with `patch`, and tells every process it changed. Locks
 * the session row first, so concurrent moves of one session's tasks serialize and each derives
 * from the others' committed work. A refused transition is a bug here, and fails loudly. Runs in
 * a transaction, in two round trips: the locked row with its turns, then the update with its
 * notification.
 */
export async function syncSessionState(
  tx: Queryable,
  sessionId: string,
  patch: Omit<SessionPatch, "state" | "expect"> = {},
  live?: LiveState,
): Promise<void> {
  // Sent together, run in order: the turns are read in a snapshot taken after the lock was
  // granted, so they include what the transaction that held it committed. Turns only: a relayed
  // read or stop never moves the session.
  const [[session], tasks] = await Promise.all([
    tx<{ state: SessionState }[]>`select state from remote_session where id = ${sessionId} for update`,
    tx<DerivationTask[]>`
      select state, kind, claimed_via, progress->>'status' as progress from desktop_task
      where session_id = ${sessionId} and kind in ('remote_session.create', 'remote_session.send')
      order by created_at desc, id desc`,
  ]);
  if (!session) return;
  const state = deriveSessionState(tasks, session.state, live);
  // Sent together: the notification is delivered at commit, and a refusal rolls both back.
  const [updated] = await Promise.all([createSessionLedger(tx).update(sessionId, { ...patch, state }), notifySession(tx, sessionId)]);
  if (!updated) throw new Error(`desktop session ${sessionId}: the ledger refused ${session.state} → ${state}`);
}
