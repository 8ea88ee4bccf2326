import { randomBytes } from "node:crypto";
import { fail } from "../errors/session-error.js";
import { inTransaction, type Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";
import { type Budget, type BudgetPause, budgetColumns, budgetOf, pauseMessage, reachedIn, remainingOf, spentIn, tighterBudget } from "./session-budget.js";
import { type Spend, type SpendColumns, spendOf } from "./session-spend.js";
import type { SessionKey } from "./update-session.js";

/** A budget the session or a session above it holds, with what that holder's tree has spent. */
export interface HeldBudget {
  ownerId: string;
  /** 0: the session's own; 1: its spawner's; and so on up. */
  level: number;
  budget: Budget;
  spent: Spend;
}

// States in which a session's turn is under way: a pause stops it, and raising the budget resumes it.
const TURN_UNDER_WAY = ["running", "waking", "waiting_input"];

/**
 * The budgets held by the session and every session above it, nearest first, each with the spend
 * of the holder's whole tree below it. Depth is bounded by the spawn rules (64 at most). A session
 * not `budgeted` has none: one primary-key lookup says so.
 */
export async function budgetsOver(sql: Queryable, key: SessionKey): Promise<HeldBudget[]> {
  const holders = await sql<{ id: string; level: number; budget_tokens: string | null; budget_cost_micros: string | null; budget_running_ms: string | null }[]>`
    with recursive up as (
      select id, spawned_by, budget_tokens, budget_cost_micros, budget_running_ms, 0 as level from remote_session
      where organization_id = ${key.organizationId} and id = ${key.id} and budgeted
      union all
      select p.id, p.spawned_by, p.budget_tokens, p.budget_cost_micros, p.budget_running_ms, up.level + 1
      from remote_session p join up on p.organization_id = ${key.organizationId} and p.id = up.spawned_by
      where up.level < 64)
    select id, level, budget_tokens, budget_cost_micros, budget_running_ms from up
    where budget_tokens is not null or budget_cost_micros is not null or budget_running_ms is not null
    order by level`;
  const held: HeldBudget[] = [];
  for (const holder of holders) {
    const budget = budgetOf(holder);
    if (budget)
      held.push({ ownerId: holder.id, level: holder.level, budget, spent: await treeSpend(sql, { organizationId: key.organizationId, id: holder.id }) });
  }
  return held;
}

/** What a session and every session below it spent together. */
export async function treeSpend(sql: Queryable, key: SessionKey): Promise<Spend> {
  const [row] = await sql<SpendColumns[]>`
    with recursive below as (
      select id, spent_tokens_in, spent_tokens_out, spent_cost_micros, spent_running_ms, usage_reported, 0 as level from remote_session
      where organization_id = ${key.organizationId} and id = ${key.id}
      union all
      select s.id, s.spent_tokens_in, s.spent_tokens_out, s.spent_cost_micros, s.spent_running_ms, s.usage_reported, b.level + 1
      from remote_session s join below b on s.organization_id = ${key.organizationId} and s.spawned_by = b.id
      where b.level < 64)
    select coalesce(sum(spent_tokens_in), 0) as spent_tokens_in, coalesce(sum(spent_tokens_out), 0) as spent_tokens_out,
      sum(spent_cost_micros) as spent_cost_micros, coalesce(sum(spent_running_ms), 0) as spent_running_ms,
      coalesce(bool_or(usage_reported), false) as usage_reported
    from below`;
  return spendOf(row!);
}

/** The pause for the nearest budget `held` has reached, or null. */
function pauseFor(sessionId: string, held: readonly HeldBudget[]): Omit<BudgetPause, "interrupted"> | null {
  for (const { ownerId, budget, spent } of held) {
    const reached = reachedIn(spent, budget);
    if (reached.length === 0) continue;
    return {
      id: `budget_${randomBytes(12).toString("base64url")}`,
      scope: ownerId === sessionId ? "session" : "tree",
      ownerId,
      budget,
      spent,
      reached,
      at: new Date().toISOString(),
    };
  }
  return null;
}

/**
 * Pauses the session when its spend reached a budget it or a session above it holds: the pause is
 * written only where none is open and no stop was asked (a stop ends a pause for good, until a new
 * prompt), under the row's lock, so of any number of writers (replicas, a retried post) exactly
 * one gets it back, and only that one stops the turn. Null when nothing was reached or another
 * writer paused it first. Call it after recording a spend, on the same connection or transaction.
 */
export function pauseOverBudget(sql: Queryable, key: SessionKey): Promise<BudgetPause | null> {
  return inTransaction(sql, async (tx) => {
    // The row's lock first: a raise committed meanwhile is seen, and never undone by a pause from older budgets.
    const [row] = await tx<{ open: boolean }[]>`
      select budget_pause is null and stop_requested_at is null and budgeted as open from remote_session
      where organization_id = ${key.organizationId} and id = ${key.id} for update`;
    if (!row?.open) return null;
    const found = pauseFor(key.id, await budgetsOver(tx, key));
    if (!found) return null;
    const [paused] = await tx<{ interrupted: boolean }[]>`
      update remote_session set budget_pause = ${tx.json(found as never)} || jsonb_build_object('interrupted', state = any(${TURN_UNDER_WAY}::text[]))
      where organization_id = ${key.organizationId} and id = ${key.id}
      returning (budget_pause->>'interrupted')::boolean as interrupted`;
    return paused ? { ...found, interrupted: paused.interrupted } : null;
  });
}

/** Records that a pause's turn was over when it was stopped: raising the budget then resumes nothing. */
export async function pauseFoundIdle(sql: Queryable, key: SessionKey, pauseId: string): Promise<void> {
  await sql`
    update remote_session set budget_pause = budget_pause || '{"interrupted": false}'::jsonb
    where organization_id = ${key.organizationId} and id = ${key.id} and budget_pause->>'id' = ${pauseId}`;
}

/** The first open pause in the tree of `session` (its root and every session below), or null. */
export async function openPauseInTree(
  sql: Queryable,
  scope: OwnerScope,
  session: { id: string; rootId: string | null },
): Promise<{ sessionId: string; pause: BudgetPause } | null> {
  const [row] = await sql<{ id: string; budget_pause: BudgetPause }[]>`
    select id, budget_pause from remote_session
    where organization_id = ${scope.organizationId} and coalesce(root_id, id) = ${session.rootId ?? session.id} and budget_pause is not null
    order by (id = ${session.id}) desc, id limit 1`;
  return row ? { sessionId: row.id, pause: row.budget_pause } : null;
}

/** Refuses a send or a create in a tree one of whose sessions is paused at a budget (nothing is changed). */
export async function refuseWhilePaused(sql: Queryable, scope: OwnerScope, session: { id: string; rootId: string | null }, what: string): Promise<void> {
  const open = await openPauseInTree(sql, scope, session);
  if (!open) return;
  fail("budget_paused", `${what} was refused: session ${open.sessionId} of this tree is paused at a budget (${pauseMessage(open.pause)})`, {
    context: { sessionId: open.sessionId, requestId: open.pause.id, scope: open.pause.scope },
  });
}

/**
 * The budget a session spawned by `spawnerId` gets: what it asked for, which may not pass what
 * any budget above it has left (refused, typed, nothing written), or none of its own (it shares
 * theirs). Also whether it is budgeted (anything above it holds a budget).
 */
export async function carveBudget(sql: Queryable, spawner: SessionKey, asked: Budget | undefined): Promise<{ budget: Budget | undefined; budgeted: boolean }> {
  const held = await budgetsOver(sql, spawner);
  if (held.length === 0) return { budget: asked, budgeted: asked !== undefined };
  const left = held.reduce<Budget>((tightest, { budget, spent }) => tighterBudget(tightest, remainingOf(budget, spent)), {});
  const spentOut = (Object.entries(left) as [keyof Budget, number][]).filter(([, value]) => value <= 0).map(([dimension]) => dimension);
  if (spentOut.length > 0) {
    fail("budget_paused", `the budgets above this session have no ${spentOut.join(" or ")} left: nothing was created; the member raises the budget first`, {
      context: { remaining: left },
    });
  }
  for (const [dimension, value] of Object.entries(asked ?? {}) as [keyof Budget, number][]) {
    const most = left[dimension];
    if (most !== undefined && value > most) {
      fail(
        "invalid_capability_arguments",
        `budget.${dimension} asks for ${value}, past the ${most} the budgets above this session have left: ask for ${most} or less`,
        {
          context: { remaining: left },
        },
      );
    }
  }
  return { budget: asked, budgeted: true };
}

/** What raising a paused session's budget did. */
export interface RaisedBudget {
  /** The pause the answer ended (or another answer to it had ended). */
  ended: BudgetPause;
  /** Another answer ended the pause first: this one only raised the budget, and resumes nothing. */
  alreadyAnswered: boolean;
  /** A budget still reached after the raise (another one above it): the session stays paused on it. */
  next: BudgetPause | null;
}

/**
 * Raises the budget `pauseId` paused the session at (its holder's dimensions only, never below
 * what they were) and ends the pause. An answer to the pause another answer just ended still
 * raises (concurrent raises end at the larger) and says so (`alreadyAnswered`). Null when the
 * session never waited on `pauseId`. An answer that leaves the budget reached is refused, typed,
 * and changes nothing. Runs in one transaction, under the paused row's lock.
 */
export async function raiseBudget(sql: Queryable, scope: OwnerScope, sessionId: string, pauseId: string, raise: Budget): Promise<RaisedBudget | null> {
  const run = async (tx: Queryable): Promise<RaisedBudget | null> => {
    const [row] = await tx<{ budget_pause: BudgetPause | null; budget_pause_ended: BudgetPause | null }[]>`
      select budget_pause, budget_pause_ended from remote_session
      where organization_id = ${scope.organizationId} and user_id = ${scope.userId} and id = ${sessionId} for update`;
    const open = row?.budget_pause?.id === pauseId ? row.budget_pause : null;
    const ended = open ?? (row?.budget_pause_ended?.id === pauseId ? row.budget_pause_ended : null);
    if (!ended) return null;
    const columns = budgetColumns(raise);
    await tx`
      update remote_session set
        budget_tokens = case when budget_tokens is null then null else greatest(budget_tokens, ${columns.tokens}::bigint) end,
        budget_cost_micros = case when budget_cost_micros is null then null else greatest(budget_cost_micros, ${columns.costMicros}::bigint) end,
        budget_running_ms = case when budget_running_ms is null then null else greatest(budget_running_ms, ${columns.runningMs}::bigint) end
      where organization_id = ${scope.organizationId} and id = ${ended.ownerId}`;
    const key = { organizationId: scope.organizationId, id: sessionId };
    const held = await budgetsOver(tx, key);
    const owner = held.find((budget) => budget.ownerId === ended.ownerId);
    const still = owner ? reachedIn(owner.spent, owner.budget) : [];
    if (owner && still.length > 0) {
      fail(
        "invalid_capability_arguments",
        `the budget is still reached after this answer (${still.map((d) => `${d}: ${owner.budget[d]} set, ${spentIn(owner.spent, d)} spent`).join("; ")}): raise ${still.join(" and ")} above what was spent`,
        {
          context: { budget: owner.budget, spent: owner.spent },
        },
      );
    }
    if (!open) return { ended, alreadyAnswered: true, next: null };
    const found = pauseFor(sessionId, held);
    const next = found ? { ...found, interrupted: ended.interrupted } : null;
    await tx`
      update remote_session set budget_pause = ${next ? tx.json(next as never) : null}, budget_pause_ended = ${tx.json(ended as never)}
      where organization_id = ${scope.organizationId} and id = ${sessionId}`;
    return { ended, alreadyAnswered: false, next };
  };
  return inTransaction(sql, run);
}
