import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionFailure } from "../errors/session-error.js";
import { migrate } from "../migrate.js";
import { CONTINUE_PROMPT } from "../sessions/budget-pause.js";
import { createRemoteSessions } from "../sessions.js";
import type { TargetCall } from "../target.js";
import { runningTarget } from "./running-target.testing.js";
import { createSessionLedger } from "./session-ledger.js";

// Budgets on real PostgreSQL through the session model, over a target that runs whatever it is
// given and says which turns it stopped and which prompts it was sent.
const db = useTestDatabase();
const call: TargetCall = { organizationId: "org_budget", userId: "user_alice", memberId: "mem_alice", referenceId: "ref_test" };
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error.error : error);
const rules = { maxDepth: 3, maxLivePerSpawner: 8 };

beforeAll(async () => {
  await migrate(db.current.sql);
});

/** The ledger on the test database, and the session model over it. */
function budgetModel() {
  const ledger = createSessionLedger(db.current.sql);
  return { ledger, sessions: createRemoteSessions(ledger) };
}

describe("budgets", () => {
  it("pauses a three-level tree when the grandchild's spend reaches the root's budget, once, and resumes it when raised", async () => {
    const { ledger, sessions } = budgetModel();
    const { target, stopped, prompts, reads } = runningTarget();
    const root = await sessions.create(call, target, { title: "root", extra: {}, budget: { tokens: 1_000 } });
    const child = await sessions.create(call, target, { title: "child", extra: {} }, { spawn: { spawnerId: root.sessionId, rules } });
    const grandchild = await sessions.create(call, target, { title: "grandchild", extra: {} }, { spawn: { spawnerId: child.sessionId, rules } });
    expect(await ledger.find(call, grandchild.sessionId)).toMatchObject({ budgeted: true, budget: null });
    const key = { organizationId: call.organizationId, id: grandchild.sessionId };
    await ledger.update({ organizationId: call.organizationId, id: root.sessionId }, { spent: { tokensIn: 300, tokensOut: 300 } });
    await ledger.update(key, { spent: { tokensIn: 200, tokensOut: 100 } });
    expect(await ledger.pauseOverBudget(key)).toBeNull();
    await ledger.update(key, { spent: { tokensOut: 100 } });
    // Two writers (two replicas) check the same spend: exactly one opens the pause.
    const pauses = await Promise.all([ledger.pauseOverBudget(key), ledger.pauseOverBudget(key)]);
    const pause = pauses.find((p) => p !== null)!;
    expect(pauses.filter((p) => p !== null)).toHaveLength(1);
    expect(pause).toMatchObject({ scope: "tree", ownerId: root.sessionId, reached: ["tokens"], interrupted: true, spent: { tokens: 1_000 } });

    // Nothing new runs in the tree: a send anywhere in it, and a spawn, are refused with the pending request.
    const rootRow = (await ledger.find(call, root.sessionId))!;
    const send = await sessions.send(call, target, rootRow, { prompt: "more" }).catch(codeOf);
    expect(send).toBe("budget_paused");
    const spawn = await sessions.create(call, target, { title: "another", extra: {} }, { spawn: { spawnerId: child.sessionId, rules } }).catch(codeOf);
    expect(spawn).toBe("budget_paused");
    expect(await ledger.tree(call, root.sessionId)).toHaveLength(2);

    // A read shows the pause as the session's request.
    const paused = (await ledger.find(call, grandchild.sessionId))!;
    const read = await sessions.read(call, target, paused, { limit: 10, waitMs: 0 });
    expect(read).toMatchObject({ state: "waiting_input", pending: { kind: "budget", id: pause.id, scope: "tree", budgetOf: root.sessionId } });
    expect(stopped).toEqual([]);
    // A read that waits on it looks once a second, not in a loop, while the member decides.
    const looked = reads.count;
    const waited = await sessions.read(call, target, paused, { limit: 10, waitMs: 2_500, cursor: read.cursor });
    expect(waited.state).toBe("waiting_input");
    expect(reads.count - looked).toBeLessThanOrEqual(4);
    // An engine's own request is not answered while the tree is paused.
    const permission = await sessions.respond(call, target, paused, { requestId: "per_1", answer: { permission: "once" } }).catch(codeOf);
    expect(permission).toBe("budget_paused");

    // An answer that leaves it reached changes nothing; a raise ends the pause and resumes the turn.
    const low = await sessions.respond(call, target, paused, { requestId: pause.id, answer: { budget: { tokens: 900 } } }).catch(codeOf);
    expect(low).toBe("invalid_capability_arguments");
    const text = await sessions.respond(call, target, paused, { requestId: pause.id, answer: { text: "go on" } }).catch(codeOf);
    expect(text).toBe("invalid_capability_arguments");
    const [a, b] = await Promise.all([
      sessions.respond(call, target, paused, { requestId: pause.id, answer: { budget: { tokens: 2_000 } } }).catch(codeOf),
      sessions.respond(call, target, paused, { requestId: pause.id, answer: { budget: { tokens: 3_000 } } }).catch(codeOf),
    ]);
    // One answer ends the pause and resumes; the other finds it answered, and still raises: the larger stands.
    expect([a, b].map((r) => (r as { alreadyAnswered: boolean }).alreadyAnswered).sort()).toEqual([false, true]);
    expect(prompts).toEqual([CONTINUE_PROMPT]);
    expect((await ledger.find(call, grandchild.sessionId))!.budgetPause).toBeNull();
    expect((await ledger.find(call, root.sessionId))!.budget).toEqual({ tokens: 3_000 });
    // An answer to a pause that never was: not pending.
    const never = await sessions.respond(call, target, paused, { requestId: "budget_never", answer: { budget: { tokens: 9_000 } } }).catch(codeOf);
    expect(never).toBe("input_not_pending");
  });

  it("carves a spawned session's budget from what the budgets above it have left", async () => {
    const { ledger, sessions } = budgetModel();
    const { target } = runningTarget();
    const root = await sessions.create(call, target, { title: "root", extra: {}, budget: { tokens: 1_000, costUsd: 2 } });
    await ledger.update({ organizationId: call.organizationId, id: root.sessionId }, { spent: { tokensIn: 400, costMicros: 500_000 } });
    const over = await sessions
      .create(call, target, { title: "greedy", extra: {}, budget: { tokens: 700 } }, { spawn: { spawnerId: root.sessionId, rules } })
      .catch((error: unknown) => (SessionFailure.isInstance(error) ? error.error : error));
    expect(over).toMatchObject({ error: "invalid_capability_arguments", context: { remaining: { tokens: 600, costUsd: 1.5 } } });
    const child = await sessions.create(call, target, { title: "modest", extra: {}, budget: { tokens: 100 } }, { spawn: { spawnerId: root.sessionId, rules } });
    const key = { organizationId: call.organizationId, id: child.sessionId };
    await ledger.update(key, { spent: { tokensIn: 100 } });
    // Its own budget is reached first: the pause is the session's own.
    expect(await ledger.pauseOverBudget(key)).toMatchObject({ scope: "session", ownerId: child.sessionId });
    // Nothing left above: a spawn that asks no budget of its own is refused too.
    await ledger.update({ organizationId: call.organizationId, id: root.sessionId }, { spent: { tokensIn: 600 } });
    const broke = await sessions.create(call, target, { title: "late", extra: {} }, { spawn: { spawnerId: root.sessionId, rules } }).catch(codeOf);
    expect(broke).toBe("budget_paused");
  });

  it("checks no budget for sessions of an unbudgeted tree, and a stop ends a pause", async () => {
    const { ledger, sessions } = budgetModel();
    const { target } = runningTarget();
    const free = await sessions.create(call, target, { title: "free", extra: {} });
    const freeKey = { organizationId: call.organizationId, id: free.sessionId };
    await ledger.update(freeKey, { spent: { tokensIn: 1e9 } });
    expect(await ledger.budgetsOver(freeKey)).toEqual([]);
    expect(await ledger.pauseOverBudget(freeKey)).toBeNull();
    const capped = await sessions.create(call, target, { title: "capped", extra: {}, budget: { runningMs: 1_000 } });
    const key = { organizationId: call.organizationId, id: capped.sessionId };
    await ledger.update(key, { spent: { runningMs: 1_000 } });
    expect(await ledger.pauseOverBudget(key)).toMatchObject({ scope: "session", reached: ["runningMs"] });
    const stop = await sessions.stop(call, target, (await ledger.find(call, capped.sessionId))!);
    expect(stop.stopped).toBe(true);
    expect((await ledger.find(call, capped.sessionId))!.budgetPause).toBeNull();
    // A stop ends it for good: the spend past the budget opens no new pause until a new prompt.
    await ledger.update(key, { spent: { runningMs: 10 } });
    expect(await ledger.pauseOverBudget(key)).toBeNull();
  });
});
