import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// A desktop runner coalesces its events: when the member answers one request and the engine asks
// the next within one window, a single post carries both. The member must hear of the second
// request as of the first, with its own answer link and its own overdue clock.
const db = useTestDatabase();
const member = fixedDevMember("asks_twice");
let test: Awaited<ReturnType<typeof startTestGateway>>;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, member, { notify: { intervalMs: 100, allowPrivateNetworks: true } });
}, 60_000);

afterAll(async () => {
  await test?.close();
  await hooks?.close();
});

const asked = (sequence: number, requestId: string): TaskEvent => ({
  sequence,
  type: "input.requested",
  payload: { requestId, kind: "permission", title: "bash", detail: `echo ${requestId}` },
});
const sent = (index: number) => JSON.parse(hooks.received[index]!.body).data as { sessionId: string; state: string; answerUrl?: string };

it("notifies a second request that arrives in the post that resolves the first, and restarts its overdue clock", async () => {
  const channel = await fetch(`${test.gateway.baseUrl}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "webhook", target: hooks.url("/asks"), eventKinds: ["waiting_input"], allowText: true }),
  });
  expect(channel.status).toBe(201);
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: "runner-asks-twice",
      name: "Asks twice",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token });
  const { structuredContent } = await test.execute("remote-session:create", { target: "desktop", prompt: "two questions" });
  const sessionId = structuredContent.sessionId as string;
  const task = (await runner.claimNext())!;
  await runner.postEvents(task.taskId, task.attempt, [{ sequence: 1, type: "session.bound", payload: { localSessionId: "ses_twice" } }, asked(2, "per_first")]);
  await hooks.until((received) => received.length === 1, 10_000);
  const [first] = await test.sql<{ entered_at: Date }[]>`select entered_at from notify_waiting where session_id = ${sessionId}`;
  expect(first).toBeDefined();

  await runner.postEvents(task.taskId, task.attempt, [{ sequence: 3, type: "input.resolved", payload: { requestId: "per_first" } }, asked(4, "per_second")]);
  await hooks.until((received) => received.length === 2, 10_000);
  expect(sent(1)).toMatchObject({ sessionId, state: "waiting_input", answerUrl: expect.any(String) });
  // Each webhook's link answers its own request.
  const links = await test.sql<{ request_id: string }[]>`select request_id from notify_answer_link where session_id = ${sessionId} order by created_at`;
  expect(links.map((link) => link.request_id)).toEqual(["per_first", "per_second"]);
  const [second] = await test.sql<{ entered_at: Date }[]>`select entered_at from notify_waiting where session_id = ${sessionId}`;
  expect(second!.entered_at.getTime()).toBeGreaterThan(first!.entered_at.getTime());
  const read = (await test.execute("remote-session:read", { sessionId })).structuredContent;
  expect(read).toMatchObject({ state: "waiting_input", pending: { id: "per_second" } });
}, 60_000);
