import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// The drain looks at the outbox only once an hour here: a notification that goes out within
// seconds went because the session's hint on the wake bus woke it.
const db = useTestDatabase();
const member = fixedDevMember("notify_wake");
let test: Awaited<ReturnType<typeof startTestGateway>>;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, member, { notify: { intervalMs: 3_600_000, allowPrivateNetworks: true } });
}, 60_000);

afterAll(async () => {
  await test?.close();
  await hooks?.close();
});

it("sends a turn's end at once: the session hint of the state change wakes the drain", async () => {
  const created = await fetch(`${test.gateway.baseUrl}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "webhook", target: hooks.url("/wake"), eventKinds: ["turn_idle"] }),
  });
  expect(created.status).toBe(201);
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: "runner-notify-wake",
      name: "Wake",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token });
  const { structuredContent } = await test.execute("remote-session:create", { target: "desktop", prompt: "one turn" });
  const task = (await runner.claimNext())!;
  const completedAt = Date.now();
  await runner.complete(task.taskId, {
    attempt: task.attempt,
    status: "done",
    localSessionId: "ses_wake",
    events: [{ sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: "done" } }],
  });
  await hooks.until((received) => received.length === 1, 5_000);
  expect(JSON.parse(hooks.received[0]!.body)).toMatchObject({ type: "session.turn_idle", data: { sessionId: structuredContent.sessionId } });
  expect(Date.now() - completedAt).toBeLessThan(5_000);
});
