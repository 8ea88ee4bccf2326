import { createSessionLedger, pruneLedger } from "@openwork/remote-session-core";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSweeper } from "./sweeper.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
const member = { organizationId: "org_retention", memberId: "mem_retention" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

const count = async (table: string) => Number((await gateway.sql.unsafe(`select count(*)::int as n from ${table}`))[0]!.n);

it("deletes what retention no longer keeps, in bounded batches, on several replicas at once, and nothing else", async () => {
  const token = await gateway.registerRunner(member, "runner-retention-01");
  const runner = createRunnerClient({ baseUrl: gateway.baseUrl, token });
  const call = gateway.call(member);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const created = await gateway.sessions.create(call, { title: `s${i}`, prompt: "p" });
    const [item] = (await runner.work()).items;
    const { attempt } = await runner.claim(item!.taskId);
    await runner.postEvents(item!.taskId, attempt, [{ sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: "done" } }]);
    await runner.complete(item!.taskId, { attempt, status: "done", localSessionId: `ses_${i}` });
    ids.push(created.sessionId);
  }
  const running = await gateway.sessions.create(call, { title: "still running", prompt: "p" });
  const [item] = (await runner.work()).items;
  await runner.claim(item!.taskId);
  // Ten finished sessions and the running one went quiet 40 days ago; two finished ones are recent.
  const old = [...ids.slice(0, 10), running.sessionId];
  await gateway.sql`update remote_session set last_activity_at = now() - interval '40 days' where id = any(${old}::text[])`;
  // A create whose process died after reserving its row: still queued, with no task, for 40 days.
  await gateway.sql`
    insert into remote_session (id, organization_id, user_id, target, title, state, last_activity_at)
    values ('rs_orphan00000000000000000000', 'org_retention', 'user_orphan', 'cloud', 'orphan', 'queued', now() - interval '40 days')`;
  await gateway.sql`
    insert into remote_session_idempotency (organization_id, user_id, operation, key_digest, args_digest, state, created_at)
    values ('org_retention', 'u', 'create', ${"a".repeat(64)}, ${"b".repeat(64)}, 'done', now() - interval '2 days'),
           ('org_retention', 'u', 'create', ${"c".repeat(64)}, ${"d".repeat(64)}, 'done', now())`;
  const eventsBefore = await count("desktop_task_event");

  // Two replicas pruning at once with batches of 3: every old row goes exactly once.
  const passes = await Promise.all([pruneLedger(gateway.sql, { batch: 3 }), pruneLedger(gateway.sql, { batch: 3 })]);
  expect(passes.reduce((n, p) => n + p.sessions, 0)).toBeLessThanOrEqual(6);
  const sweeper = startSweeper({ ...gateway.store, timings: { sweepIntervalMs: 20 }, retentionEvery: 1, retention: { batch: 3 } });
  try {
    await eventually(async () => ((await count("remote_session")) === 3 ? true : undefined), 10_000);
  } finally {
    await sweeper.stop();
  }
  const ledger = createSessionLedger(gateway.sql);
  for (const id of ids.slice(0, 10)) expect(await ledger.find(call, id)).toBeNull();
  expect(await gateway.sql`select id from remote_session where id = 'rs_orphan00000000000000000000'`).toHaveLength(0);
  for (const id of [...ids.slice(10), running.sessionId]) expect(await ledger.find(call, id)).not.toBeNull();
  // Their tasks and events went with them; the idempotency key past 24 h too.
  expect(await count("desktop_task")).toBe(3);
  expect(await count("desktop_task_event")).toBe(eventsBefore - 10);
  expect(await count("remote_session_idempotency")).toBe(1);
});
