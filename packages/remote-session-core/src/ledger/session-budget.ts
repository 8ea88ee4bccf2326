import { z } from "zod";
import type { Spend } from "./session-spend.js";

/** What a session (and every session below it) may spend at most; any subset of the three. */
export interface Budget {
  tokens?: number;
  /** In US dollars. */
  costUsd?: number;
  runningMs?: number;
}

/** The largest budget any dimension takes (a bigint column; far past any real spend). */
const BUDGET_CEILING = 1e15;

/** A budget as callers give it: positive numbers, at least one of them. Strict, as callers send it. */
export const BudgetSchema = z
  .strictObject({
    tokens: z.number().int().positive().max(BUDGET_CEILING).optional(),
    costUsd: z.number().positive().max(1e9).optional(),
    runningMs: z.number().int().positive().max(BUDGET_CEILING).optional(),
  })
  .refine((budget) => Object.values(budget).some((value) => value !== undefined), "name at least one of tokens, costUsd, runningMs");

/** The budget dimensions, as the ledger names them and a spend measures them. */
export const BUDGET_DIMENSIONS = ["tokens", "costUsd", "runningMs"] as const;
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];

/** What a spend measures in one dimension (an unpriced spend costs nothing). */
export function spentIn(spend: Spend, dimension: BudgetDimension): number {
  if (dimension === "costUsd") return spend.costUsd ?? 0;
  return spend[dimension];
}

/** The dimensions of `budget` that `spend` has reached. */
export function reachedIn(spend: Spend, budget: Budget): BudgetDimension[] {
  return BUDGET_DIMENSIONS.filter((dimension) => budget[dimension] !== undefined && spentIn(spend, dimension) >= budget[dimension]!);
}

/** What is left of `budget` after `spend`, in the dimensions it sets (never below zero). */
export function remainingOf(budget: Budget, spend: Spend): Budget {
  const left: Budget = {};
  for (const dimension of BUDGET_DIMENSIONS) {
    if (budget[dimension] !== undefined) left[dimension] = Math.max(0, budget[dimension]! - spentIn(spend, dimension));
  }
  return left;
}

/** The tighter of two budgets, dimension by dimension (one that sets none leaves the other's). */
export function tighterBudget(a: Budget, b: Budget): Budget {
  const tight: Budget = {};
  for (const dimension of BUDGET_DIMENSIONS) {
    const values = [a[dimension], b[dimension]].filter((value): value is number => value !== undefined);
    if (values.length > 0) tight[dimension] = Math.min(...values);
  }
  return tight;
}

/** Whether a budget sets anything. */
export const setsBudget = (budget: Budget | null | undefined): budget is Budget =>
  budget !== null && budget !== undefined && BUDGET_DIMENSIONS.some((dimension) => budget[dimension] !== undefined);

/** The budget columns of a session row. */
export interface BudgetColumns {
  budget_tokens: string | number | null;
  budget_cost_micros: string | number | null;
  budget_running_ms: string | number | null;
  budgeted: boolean;
  budget_pause: BudgetPause | null;
}

/** A row's own budget, or null when it sets none. */
export function budgetOf(row: Pick<BudgetColumns, "budget_tokens" | "budget_cost_micros" | "budget_running_ms">): Budget | null {
  const budget: Budget = {};
  if (row.budget_tokens !== null) budget.tokens = Number(row.budget_tokens);
  if (row.budget_cost_micros !== null) budget.costUsd = Number(row.budget_cost_micros) / 1_000_000;
  if (row.budget_running_ms !== null) budget.runningMs = Number(row.budget_running_ms);
  return setsBudget(budget) ? budget : null;
}

/** A budget as the columns hold it (cost in micro-dollars, rounded up so a cap never loosens). */
export function budgetColumns(budget: Budget | null | undefined) {
  return {
    tokens: budget?.tokens ?? null,
    costMicros: budget?.costUsd === undefined ? null : Math.ceil(budget.costUsd * 1_000_000),
    runningMs: budget?.runningMs ?? null,
  };
}

/**
 * A session paused at a budget: what it reached, asked of the human as the `budget` request `id`
 * until they raise the budget (`respond`) or stop the session.
 */
export interface BudgetPause {
  /** The request id `respond` answers. */
  id: string;
  /** `session`: its own budget; `tree`: a budget of a session above it (`ownerId`). */
  scope: "session" | "tree";
  /** The session whose budget was reached. */
  ownerId: string;
  /** That budget, and what its tree had spent against it. */
  budget: Budget;
  spent: Spend;
  reached: BudgetDimension[];
  /** A turn was running (it was stopped): raising the budget resumes it. */
  interrupted: boolean;
  at: string;
}

/** The sentence a paused session says to whoever reads it. */
export function pauseMessage(pause: BudgetPause): string {
  const whose = pause.scope === "session" ? "this session's budget" : `the budget of session ${pause.ownerId}, above this one,`;
  const what = pause.reached.map((dimension) => `${dimension} ${spentIn(pause.spent, dimension)} of ${pause.budget[dimension]}`).join(", ");
  const then = pause.interrupted ? "its turn was paused" : "it takes no more prompts";
  return `${whose} is reached (${what}): ${then}. The member raises the budget (remote-session:respond with answer.budget) to go on, or stops the session.`;
}
