import { SessionFailure } from "@openwork/remote-session-core";
import { describe, expect, it } from "vitest";
import { budgetForCreate, checkCeiling } from "./budget-rules.js";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return SessionFailure.isInstance(error) ? error.error : error;
  }
  return null;
};

describe("budget rules", () => {
  const rules = { default: { tokens: 1_000 }, ceiling: { tokens: 5_000, costUsd: 2 } };

  it("gives the default capped by the ceiling, keeps an ask within it, and refuses one past it", () => {
    expect(budgetForCreate(rules, undefined)).toEqual({ tokens: 1_000, costUsd: 2 });
    expect(budgetForCreate(rules, { tokens: 4_000 })).toEqual({ tokens: 4_000, costUsd: 2 });
    expect(refusal(() => budgetForCreate(rules, { tokens: 6_000 }))).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [{ path: "budget.tokens" }],
    });
    expect(budgetForCreate({}, undefined)).toBeUndefined();
  });

  it("refuses a raise past the ceiling as a create's budget is refused", () => {
    expect(refusal(() => checkCeiling(rules, { costUsd: 3 }, "answer.budget"))).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [{ path: "answer.budget.costUsd", message: "at most 2" }],
    });
    expect(refusal(() => checkCeiling(rules, { tokens: 5_000 }, "answer.budget"))).toBeNull();
  });
});
