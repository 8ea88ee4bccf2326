import { createSessionLedger, type MemberScope } from "@openwork/remote-session-core";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// What a desktop session spent is what its runner reported, step by step (`usage` events), each
// step counted once however often a post is retried.
const db = useTestDatabase();
let gateway: RunnerGateway;
let members = 0;
const newMember = (): MemberScope => ({ organizationId: "org_spend", memberId: `mem_spend_${++members}` });

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
});
afterAll(async () => {
  await gateway?.close();
});

/** A new member's session whose first turn a runner claimed; the runner, the task and its attempt. */
async function claimedTurn(runnerId: string) {
  const member = newMember();
  const call = gateway.call(member);
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
  const created = await gateway.sessions.create(call, { title: "a turn", prompt: "question" });
  const [task] = (await client.work()).items;
  const { attempt } = await client.claim(task!.taskId);
  const find = async () => (await createSessionLedger(gateway.sql).find(call, created.sessionId))!;
  const spend = async () => (await find()).spend;
  // A read as the capability makes it: it records the running time the desktop's turns took.
  const read = async () => gateway.sessions.read(call, await find(), { limit: 20, waitMs: 0 });
  return { client, taskId: task!.taskId, attempt, spend, read };
}

it("adds each reported step once, a retried post's replay included, with its cost when priced", async () => {
  const { client, taskId, attempt, spend } = await claimedTurn("runner-spend-0001");
  const first: TaskEvent[] = [
    { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_spend_1" } },
    { sequence: 2, type: "usage", payload: { inputTokens: 10, outputTokens: 4, costMicros: 1_500 } },
    { sequence: 3, type: "usage", payload: { inputTokens: 3, outputTokens: 2 } },
  ];
  await client.postEvents(taskId, attempt, first);
  // The runner did not hear the answer and posts the same batch again: accepted, not counted twice.
  await client.postEvents(taskId, attempt, first);
  await client.postEvents(taskId, attempt, [{ sequence: 4, type: "usage", payload: { inputTokens: 1, outputTokens: 1, costMicros: 500 } }]);
  expect(await spend()).toEqual({ tokens: 21, tokensIn: 14, tokensOut: 7, costUsd: 0.002, runningMs: 0, usage: "reported" });
});

it("records the wall time of the desktop's turns at a read, from the claim to the turn's end, never lowering the tokens", async () => {
  const { client, taskId, attempt, spend, read } = await claimedTurn("runner-spend-0003");
  await client.postEvents(taskId, attempt, [
    { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_spend_3" } },
    { sequence: 2, type: "usage", payload: { inputTokens: 8, outputTokens: 2 } },
  ]);
  await new Promise((resolve) => setTimeout(resolve, 120));
  await client.complete(taskId, { attempt, status: "done", localSessionId: "ses_spend_3" });
  await read();
  const after = await spend();
  expect(after).toMatchObject({ tokens: 10, tokensIn: 8, tokensOut: 2, usage: "reported" });
  expect(after.runningMs).toBeGreaterThanOrEqual(100);
  // The turn is over: a later read finds the same time.
  await read();
  expect((await spend()).runningMs).toBe(after.runningMs);
});

it("reads as unreported, not as a spend of zero, while the runner reported no step", async () => {
  const { client, taskId, attempt, spend } = await claimedTurn("runner-spend-0002");
  await client.postEvents(taskId, attempt, [{ sequence: 1, type: "session.bound", payload: { localSessionId: "ses_spend_2" } }]);
  expect(await spend()).toEqual({ tokens: 0, tokensIn: 0, tokensOut: 0, costUsd: null, runningMs: 0, usage: "unreported" });
});
