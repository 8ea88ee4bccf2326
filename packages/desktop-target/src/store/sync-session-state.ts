import { createSessionLedger } from "@openwork/remote-session-core";
import type { Queryable, SessionPatch, SessionState } from "@openwork/remote-session-core/internal";
import { canTransition, turnStartMove } from "@openwork/remote-session-core/internal";
import type { Dialect } from "../dialects/dialect.js";
import type { DialectSet } from "../dialects/dialect-set.js";
import { type TaskState, toSessionState } from "../task-state.js";
import type { Hints } from "../wake/hints.js";
import type { RowKey } from "./task-row.js";

/** What a live (claimed) turn may report of itself through status events. */
export type LiveState = "running" | "waiting_input";

/**
 * Where a desktop session stands, from its tasks (newest first): a claimed turn is running (or
 * waiting for the human, as it reported), else a queued one is queued, else the latest task's
 * outcome — a follow-up no desktop took in time leaves the session `interrupted` (its prompt
 * never ran; the session takes a new one once the desktop is back). The one place a desktop
 * session's state is decided, so a follow-up queued behind a running turn can never read `idle`
 * when that turn ends.
 */
export function deriveSessionState(dialects: DialectSet, tasks: DerivationTask[], current: SessionState, live?: LiveState): SessionState {
  if (tasks.some((t) => t.state === "claimed")) return live ?? (current === "waiting_input" ? current : "running");
  if (tasks.some((t) => t.state === "queued")) return "queued";
  const latest = tasks[0];
  if (!latest) return current;
  // A desktop of a dialect that reports progress completes a turn's task once it has it; the turn
  // itself then runs on the desktop, and the command's progress reports say where it stands.
  const command = tasks.find((t) => t.kind === "remote_session.create");
  if (latest.state === "done" && command && dialects.of(command.claimed_via).reportsProgress) return PROGRESS_STATE[command.progress ?? "running"] ?? "running";
  return latest.state === "expired" && latest.kind !== "remote_session.create" ? "interrupted" : toSessionState(latest.state);
}

/**
 * What `deriveSessionState` answers the moment a turn is claimed (a claimed turn means running,
 * and a session waiting for the human stays so), written without reading the turns first: the
 * ledger's `turnStartMove` over the claim's `claimed` CTE, so a claim and its session move are one
 * statement. The runner that takes a create holds the session, in its own dialect. A move the
 * table forbids finds no row in `moved`. The claim hints the session itself (through its
 * transaction's hints), after its commit.
 */
export function claimedSessionMove(tx: Queryable, runner: { runnerId: string; dialect: Dialect }) {
  // A session records its holder's dialect when that dialect relays its reads (`relayOf` finds it
  // there), and the create's id as its command when the dialect names sessions by it.
  const holder = { runnerId: runner.runnerId, ...(runner.dialect.relay ? { dialect: runner.dialect.name } : {}) };
  const command = runner.dialect.holdsByCommand ? tx`jsonb_build_object('commandId', c.id)` : tx`'{}'::jsonb`;
  return turnStartMove(tx, {
    from: tx`claimed`,
    isTurn: tx`c.kind in ('remote_session.create', 'remote_session.send')`,
    targetRef: tx`case when c.kind = 'remote_session.create' then ${tx.json(holder)}::jsonb || ${command} else '{}'::jsonb end`,
  });
}

/** A session's turn (create or follow-up) as the derivation reads it. */
export interface DerivationTask {
  /** The task's id (`desktop_lock_session` names it since migration 0017). */
  id?: string;
  state: TaskState;
  kind: string;
  claimed_via?: string | null;
  /** A delivered command's reported status (a dialect that reports progress). */
  progress?: string | null;
}

// `lost` is the sweeper's: the desktop has not been seen for the presence window mid-turn;
// `stopped`, a relayed stop the desktop accepted.
const PROGRESS_STATE: Record<string, SessionState> = {
  running: "running",
  waiting: "waiting_input",
  idle: "idle",
  error: "failed",
  lost: "interrupted",
  stopped: "stopped",
};

/** A session row locked for its move, with its turns as the derivation reads them. */
export interface LockedSession {
  id: string;
  organizationId: string;
  state: SessionState;
  tasks: DerivationTask[];
}

/**
 * Records the session's derived state with `patch`, and tells every process it changed. Locks
 * the session row first, so concurrent moves of one session's tasks serialize and each derives
 * from the others' committed work. Runs in a transaction (`transaction()`: the hint leaves after
 * the commit), in two round trips: the locked row with its turns, then the update. Returns
 * whether the session took the derived state (see `writeSessionState`). `askedAgain`: the events
 * answered a request and asked another (see `writeSessionState`).
 */
export async function syncSessionState(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  session: RowKey,
  patch: Omit<SessionPatch, "state" | "expect"> = {},
  live?: LiveState,
  askedAgain?: boolean,
): Promise<boolean> {
  return writeSessionState(tx, hints, dialects, await lockSession(tx, session), patch, live, askedAgain);
}

/**
 * `syncSessionState`'s first round trip: locks the row and reads its turns, in one statement
 * (`desktop_lock_session`, migrations 0016 and 0017: the turns are read in a snapshot taken after
 * the lock was granted, so they include what the transaction that held it committed). Null for a session
 * that is gone. Statements sent before it in the same round trip are seen by the read. Turns
 * only: a relayed read or stop never moves the session.
 */
export async function lockSession(tx: Queryable, { organizationId, id: sessionId }: RowKey): Promise<LockedSession | null> {
  const [session] = await tx<
    { state: SessionState; turns: DerivationTask[] }[]
  >`select state, turns from desktop_lock_session(${organizationId}, ${sessionId})`;
  return session ? { id: sessionId, organizationId, state: session.state, tasks: session.turns } : null;
}

/**
 * `syncSessionState`'s second round trip: the derived state with `patch`; the hint leaves after
 * the commit. News the session can no longer take — a desktop's late report about a turn of a
 * session already stopped, expired or failed (`stopped → failed`, `stopped → idle`, …) — is data,
 * not an error: the tasks keep it, the session keeps its state and its last error, and the rest
 * of `patch` (where the session lives, its activity) is still recorded. Returns false then.
 *
 * A session still waiting after events that answered its request and asked another
 * (`askedAgain`) records the turn running on first, in the same transaction: waiting_input →
 * running → waiting_input. Each is a real move of the row, so whatever follows its state (the
 * notification trigger, the record of since when it waits) sees the second request as an ask of
 * its own, not as the first one still waiting.
 */
export async function writeSessionState(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  locked: LockedSession | null,
  patch: Omit<SessionPatch, "state" | "expect"> = {},
  live?: LiveState,
  askedAgain?: boolean,
): Promise<boolean> {
  if (!locked) return false;
  const state = deriveSessionState(dialects, locked.tasks, locked.state, live);
  const session = askedAgain && locked.state === "waiting_input" && state === "waiting_input" ? await ranOn(tx, locked) : locked;
  // The row is locked: its state is the one the ledger would compare against.
  const moves = canTransition(session.state, state);
  const { lastError, ...rest } = patch;
  // It cannot be refused (the move was checked against the locked row), and if it were, it fails
  // inside PostgreSQL: a completion sends its COMMIT in the same round trip.
  await createSessionLedger(tx).require(
    session,
    moves ? { ...patch, state } : rest,
    `desktop session ${session.id}: the ledger refused ${session.state} → ${state}`,
  );
  hints.session(session.organizationId, session.id);
  return moves;
}

/** Records a waiting session's turn running on (its request answered); the row is locked, so the move cannot be refused. */
async function ranOn(tx: Queryable, session: LockedSession): Promise<LockedSession> {
  await createSessionLedger(tx).require(
    session,
    { state: "running", expect: "waiting_input" },
    `desktop session ${session.id}: the ledger refused waiting_input → running`,
  );
  return { ...session, state: "running" };
}
