import { createSessionLedger, type LedgerSession, type MemberScope } from "@openwork/remote-session-core";
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import { createRunnerClient, runRunner, type TaskOutcome, taskAbortReason } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// A turn that posts without end: its events are bounded per task, and a read of it costs its
// text, not its events.
const db = useTestDatabase();
let gateway: RunnerGateway;
const CAP = 64 * 1024;
let members = 0;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, { turnEventBytes: CAP });
});
afterAll(() => gateway.close());

const newMember = (): MemberScope => ({ organizationId: "org_big_turn", memberId: `mem_big_${++members}` });
const find = async (member: MemberScope, id: string) => (await createSessionLedger(gateway.sql).find(gateway.call(member), id)) as LedgerSession;
const deltas = (from: number, count: number, text: string): TaskEvent[] =>
  Array.from({ length: count }, (_, i) => ({ sequence: from + i, type: "assistant.delta" as const, payload: { messageId: "m1", text } }));

it("reads a turn from the text its deltas made, not from its events (the same transcript with the event rows gone)", async () => {
  const member = newMember();
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-fold-0001") });
  const created = await gateway.sessions.create(gateway.call(member), { title: "fold", prompt: "p" });
  const [item] = (await client.work()).items;
  const { attempt } = await client.claim(item!.taskId);
  for (let batch = 0; batch < 5; batch++) await client.postEvents(item!.taskId, attempt, deltas(1 + batch * 100, 100, "ab"));
  await client.postEvents(item!.taskId, attempt, [{ sequence: 501, type: "tool.call", payload: { callId: "c1", name: "bash", status: "completed" } }]);
  await client.complete(item!.taskId, { attempt, status: "done", localSessionId: "ses_fold" });
  const before = await gateway.sessions.read(gateway.call(member), await find(member, created.sessionId), { limit: 20, waitMs: 0 });
  expect(before.messages.map((m) => [m.role, m.text?.length ?? null, m.toolCalls.length])).toEqual([
    ["user", null, 0],
    ["assistant", 1_000, 1],
  ]);
  expect(before.finalAssistantText).toBe("ab".repeat(500));
  await gateway.sql`delete from desktop_task_event where task_id = ${item!.taskId}`;
  const after = await gateway.sessions.read(gateway.call(member), await find(member, created.sessionId), { limit: 20, waitMs: 0 });
  expect(after.messages).toEqual(before.messages);
  expect(after.finalAssistantText).toBe(before.finalAssistantText);
});

it("reads a long reply as before while loading no more of its text than a read can show", async () => {
  const member = newMember();
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-long-0001") });
  const created = await gateway.sessions.create(gateway.call(member), { title: "long", prompt: "p" });
  const [item] = (await client.work()).items;
  const { attempt } = await client.claim(item!.taskId);
  const reply = "0123456789".repeat(3_000);
  await client.postEvents(item!.taskId, attempt, [{ sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: reply } }]);
  await client.complete(item!.taskId, { attempt, status: "done", localSessionId: "ses_long" });
  const read = await gateway.sessions.read(gateway.call(member), await find(member, created.sessionId), { limit: 20, waitMs: 0 });
  expect(read.messages[1]).toMatchObject({ text: reply.slice(0, 4_000), truncated: true });
  expect(read.finalAssistantText).toBe(reply.slice(0, 20_000));
});

it("ends a turn whose events pass what a task may store (413 turn_too_large, failed with what came before), and the runner stops it", async () => {
  const member = newMember();
  const token = await gateway.registerRunner(member, "runner-big-00001");
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token, retry: { limit: 1, backoff: { baseMs: 10, maxMs: 20, random: () => 0.5 } } });
  const ended: TaskOutcome[] = [];
  const aborts: string[] = [];
  // An engine that writes until it is stopped.
  const runner = runRunner({
    client,
    pollIntervalMs: 600_000,
    onTaskEnd: (outcome) => void ended.push(outcome),
    handlers: {
      "remote_session.create": async (_assignment, { emit, signal }) => {
        emit({ type: "session.bound", payload: { localSessionId: "ses_big" } });
        while (!signal.aborted) {
          emit({ type: "assistant.delta", payload: { messageId: "m1", text: "x".repeat(500) } });
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        aborts.push(taskAbortReason(signal) ?? "none");
        return { status: "done", localSessionId: "ses_big" };
      },
    },
  });
  try {
    const created = await gateway.sessions.create(gateway.call(member), { title: "big", prompt: "p" });
    await eventually(async () => (ended.length > 0 ? true : undefined), 15_000);
    // The gateway ended the turn; the runner's next heartbeat told it the lease was gone.
    expect(aborts).toEqual(["lease_lost"]);
    expect(ended[0]).toMatchObject({ status: "lease_lost" });
    const [task] = await gateway.sql<{ state: string; failure_code: string; event_bytes: number }[]>`
      select state, failure_code, event_bytes from desktop_task where session_id = ${created.sessionId}`;
    expect(task).toMatchObject({ state: "failed", failure_code: "turn_too_large" });
    expect(task!.event_bytes).toBeLessThanOrEqual(CAP);
    const [stored] = await gateway.sql<{ bytes: number }[]>`
      select coalesce(sum(octet_length(event::text)), 0)::int as bytes from desktop_task_event where task_id in (select id from desktop_task where session_id = ${created.sessionId})`;
    expect(stored!.bytes).toBeLessThanOrEqual(CAP + 4_096);
    const session = await find(member, created.sessionId);
    expect(session).toMatchObject({ state: "failed", lastError: { error: "turn_too_large" } });
    // What came before the cap is the turn's reply.
    const read = await gateway.sessions.read(gateway.call(member), session, { limit: 20, waitMs: 0 });
    expect(read.messages.at(-1)).toMatchObject({ role: "assistant", truncated: true });
  } finally {
    await runner.stop();
  }
});

it("answers an events post past the cap with 413 turn_too_large and keeps none of that batch", async () => {
  const member = newMember();
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-big-00002"), retry: { limit: 0 } });
  await gateway.sessions.create(gateway.call(member), { title: "big", prompt: "p" });
  const [item] = (await client.work()).items;
  const { attempt } = await client.claim(item!.taskId);
  await client.postEvents(item!.taskId, attempt, deltas(1, 50, "y".repeat(1_000)));
  await expect(client.postEvents(item!.taskId, attempt, deltas(51, 50, "y".repeat(1_000)))).rejects.toMatchObject({ status: 413, code: "turn_too_large" });
  const [{ count }] = (await gateway.sql`select count(*)::int as count from desktop_task_event where task_id = ${item!.taskId}`) as unknown as [
    { count: number },
  ];
  expect(count).toBe(50);
  expect((await client.heartbeat(item!.taskId, attempt)).leaseValid).toBe(false);
});

it("ends a turn whose completion carries last events past the cap: failed turn_too_large, those events not kept, a replay the same", async () => {
  const member = newMember();
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-big-00003"), retry: { limit: 0 } });
  const created = await gateway.sessions.create(gateway.call(member), { title: "big", prompt: "p" });
  const [item] = (await client.work()).items;
  const { attempt } = await client.claim(item!.taskId);
  await client.postEvents(item!.taskId, attempt, deltas(1, 40, "z".repeat(1_000)));
  const completion = { attempt, status: "done" as const, localSessionId: "ses_big3", events: deltas(41, 40, "z".repeat(1_000)) };
  expect(await client.complete(item!.taskId, completion)).toMatchObject({ state: "failed" });
  expect(await client.complete(item!.taskId, completion)).toMatchObject({ state: "failed" });
  const [{ count }] = (await gateway.sql`select count(*)::int as count from desktop_task_event where task_id = ${item!.taskId}`) as unknown as [
    { count: number },
  ];
  expect(count).toBe(40);
  expect(await find(member, created.sessionId)).toMatchObject({ state: "failed", lastError: { error: "turn_too_large" } });
});
