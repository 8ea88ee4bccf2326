import { type Budget, fail, remainingOf, setsBudget, type TargetCall, tighterBudget } from "@openwork/remote-session-core";

/** Whose budgets they are: the member, in their organization. */
export type BudgetScope = Pick<TargetCall, "organizationId" | "userId" | "memberId">;

/** A host's budgets for the sessions a member starts (`budgetRules` of the source's options). */
export interface BudgetRules {
  /** The budget of a session whose create names none. */
  default?: Budget;
  /** The most a create may ask for, dimension by dimension (past it: refused, nothing made). */
  ceiling?: Budget;
}

/** No default and no ceiling: a session has the budget its create names, or none. */
export const noBudgetRules = (_scope: BudgetScope): BudgetRules => ({});

/**
 * The budget a session a person starts gets: what its create asked for, within the ceiling
 * (refused past it, typed), else the default, capped by the ceiling too.
 */
export function budgetForCreate(rules: BudgetRules, asked: Budget | undefined): Budget | undefined {
  const ceiling = rules.ceiling;
  if (asked) checkCeiling(rules, asked, "budget");
  const chosen = asked ?? rules.default;
  const capped = chosen && ceiling ? tighterBudget(chosen, ceiling) : (chosen ?? (ceiling && setsBudget(ceiling) ? ceiling : undefined));
  return setsBudget(capped) ? capped : undefined;
}

/** Refuses a budget (a create's, or a raise: `path` names it) past the ceiling, typed, before anything changes. */
export function checkCeiling(rules: BudgetRules, asked: Budget, path: string): void {
  const ceiling = rules.ceiling;
  if (!ceiling) return;
  const over = (Object.keys(asked) as (keyof Budget)[]).filter((d) => ceiling[d] !== undefined && asked[d]! > ceiling[d]!);
  if (over.length === 0) return;
  fail(
    "invalid_capability_arguments",
    `${path} asks past what this organization allows (${over.map((d) => `${d} at most ${ceiling[d]}`).join(", ")}): ask for less`,
    {
      issues: over.map((d) => ({ path: `${path}.${d}`, message: `at most ${ceiling[d]}` })),
    },
  );
}

/** A session's own budget and what is left of it after `spend` (its tree's), for `read`; nothing when it holds none. */
export const budgetShown = (budget: Budget | null, spend: Parameters<typeof remainingOf>[1]) =>
  budget ? { budget, remaining: remainingOf(budget, spend) } : {};
