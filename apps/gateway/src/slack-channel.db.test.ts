import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember, userIdOf } from "./dev-members.js";
import { type SlackMessage, slackNotifier } from "./testing/slack-notifier.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// Channel kinds are values a host passes in: a Slack-shaped kind, defined here and given to the
// gateway as an option, is created through the member routes, told of a session that asks, and
// its answer link opens the answer page. No package knows of Slack.
const db = useTestDatabase();
const member = fixedDevMember("slack_channel");
let test: Awaited<ReturnType<typeof startTestGateway>>;
let slack: WebhookReceiver;

beforeAll(async () => {
  slack = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, member, {
    notify: { intervalMs: 100, notifiers: [slackNotifier({ origin: new URL(slack.url("/")).origin })] },
  });
}, 60_000);

afterAll(async () => {
  await test?.close();
  await slack?.close();
});

const memberNotify = async (method: "GET" | "POST", path: string, body?: unknown) => {
  const response = await fetch(`${test.gateway.baseUrl}/member/notify${path}`, {
    method,
    headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const slackChannel = (extra: Record<string, unknown> = {}) => ({
  kind: "slack",
  target: slack.url("/services/T0/B0/x"),
  eventKinds: ["waiting_input"],
  allowText: true,
  ...extra,
});
const storedKinds = async () =>
  (await test.sql<{ kind: string }[]>`select kind from notify_channel where member_id = ${userIdOf(member)} order by created_at`).map((row) => row.kind);

/** A desktop session whose runner asks permission for `command`: the session goes waiting_input. */
async function sessionThatAsks(command: string): Promise<string> {
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: "runner-slack-channel",
      name: "Asks on Slack",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token });
  const { structuredContent } = await test.execute("remote-session:create", { target: "desktop", title: "Release build", prompt: "build it" });
  const task = (await runner.claimNext())!;
  await runner.postEvents(task.taskId, task.attempt, [
    { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_slack" } },
    { sequence: 2, type: "input.requested", payload: { requestId: "per_slack", kind: "permission", title: "bash", detail: command } },
  ]);
  return structuredContent.sessionId as string;
}

it("lists the host's own kind beside webhooks, with what it takes", async () => {
  const { status, body } = await memberNotify("GET", "/kinds");
  expect(status).toBe(200);
  expect(body.kinds).toContainEqual({ kind: "slack", target: expect.stringContaining("Slack incoming-webhook URL"), secret: false });
  expect(body.kinds).toContainEqual(expect.objectContaining({ kind: "webhook", secret: true }));
});

it("refuses a kind no notifier sends, and a target the kind's notifier refuses, with a typed 400, storing nothing", async () => {
  const refusals = [
    [{ ...slackChannel(), kind: "teams" }, "kind"],
    [slackChannel({ target: "https://hooks.example.com/services/x" }), "target"],
    [slackChannel({ secret: "whsec_c2VjcmV0IG9mIHRoaXJ0eS10d28gYnl0ZXMgb3IgbW9yZQ==" }), "secret"],
  ] as const;
  for (const [body, path] of refusals) {
    const answer = await memberNotify("POST", "/channels", body);
    expect(answer).toMatchObject({ status: 400, body: { error: "invalid_channel", retryable: false, issues: [expect.objectContaining({ path })] } });
  }
  expect(await storedKinds()).toEqual([]);
});

it("tells a session that asks through a Slack channel, its answer link a button that opens the answer page", async () => {
  const created = await memberNotify("POST", "/channels", slackChannel());
  expect(created.status).toBe(201);
  expect(created.body.channel).toMatchObject({ kind: "slack", target: slack.url("/services/T0/B0/x"), allowText: true });
  // The kind keeps no secret: none is handed out.
  expect(created.body).not.toHaveProperty("secret");
  expect(await storedKinds()).toEqual(["slack"]);

  const command = "make release-slack";
  const sessionId = await sessionThatAsks(command);
  await slack.until((received) => received.some((hook) => hook.path === "/services/T0/B0/x"));
  const hook = slack.received.find((received) => received.path === "/services/T0/B0/x")!;
  expect(hook.headers["content-type"]).toBe("application/json");
  const message = JSON.parse(hook.body) as SlackMessage;
  expect(message).toEqual({
    text: expect.stringContaining("Release build"),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: message.text } },
      { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Answer" }, url: expect.any(String) }] },
    ],
  });
  const answerUrl = (message.blocks[1] as Extract<SlackMessage["blocks"][number], { type: "actions" }>).elements[0]!.url;
  expect(answerUrl.startsWith(`${test.gateway.baseUrl}/notify/answer/`)).toBe(true);
  const links = await test.sql<{ request_id: string }[]>`select request_id from notify_answer_link where session_id = ${sessionId}`;
  expect(links).toEqual([{ request_id: "per_slack" }]);

  const page = await fetch(answerUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(await page.text()).toContain(command);
}, 60_000);
