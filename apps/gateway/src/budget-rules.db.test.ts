import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { budgetRulesOf, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// The reference gateway's budget rules, from its config: a member's default and ceiling for the
// sessions they start (their own rules before their organization's), on the echo target.
const db = useTestDatabase();
const alice = fixedDevMember("budget_rules");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  const budgets = {
    organizations: { [alice.organizationId]: { default: { tokens: 50_000 }, ceiling: { tokens: 100_000, costUsd: 5 } } },
    members: {},
  };
  test = await startTestGateway(db.current.url, alice, { echoTarget: true, budgetRules: budgetRulesOf({ budgets }) });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

const readBudget = async (sessionId: string) => ((await test.execute("remote-session:read", { sessionId })).structuredContent as { budget?: unknown }).budget;

it("gives a create that names no budget the default, capped by the ceiling", async () => {
  const created = await test.execute("remote-session:create", { target: "echo", prompt: "hello" });
  expect(created.isError).toBeUndefined();
  expect(await readBudget(String(created.structuredContent.sessionId))).toEqual({ tokens: 50_000, costUsd: 5 });
});

it("keeps what a create asks for within the ceiling, and refuses a create that asks past it", async () => {
  const within = await test.execute("remote-session:create", { target: "echo", prompt: "hello", budget: { tokens: 80_000 } });
  expect(await readBudget(String(within.structuredContent.sessionId))).toEqual({ tokens: 80_000, costUsd: 5 });
  const past = await test.execute("remote-session:create", { target: "echo", prompt: "hello", budget: { tokens: 200_000 } });
  expect(past.isError).toBe(true);
  expect(past.structuredContent).toMatchObject({ error: "invalid_capability_arguments", issues: [{ path: "budget.tokens", message: "at most 100000" }] });
  const listed = (await test.execute("remote-session:list", {})).structuredContent.sessions as unknown[];
  expect(listed).toHaveLength(2);
});
