import { createEchoEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { addWebhookChannel, startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// A session paused at its budget tells its member (`budget_reached`, once per pause) with an
// answer link whose page offers "add more" choices and a stop; the page's answer goes through
// the capability's own respond or stop, as the member's.
const db = useTestDatabase();
const alice = fixedDevMember("budget_notify");
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
let hooks: WebhookReceiver;
type Hook = { type: string; data: { sessionId: string; kind: string; answerUrl?: string } };

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, alice, {
    notify: { intervalMs: 100, allowPrivateNetworks: true, answerLinkSecret: "budget-notify-test-link-secret-0123456789abcdef" },
  });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "budget-notify-desktop",
    name: "Budget desktop",
    engine: createEchoEngine(),
  });
  await addWebhookChannel(test.gateway.baseUrl, alice.sessionToken, hooks.url("/budget"), ["budget_reached"]);
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
  await hooks?.close();
});

const hooksOf = (sessionId: string) => hooks.received.map((hook) => JSON.parse(hook.body) as Hook).filter((hook) => hook.data.sessionId === sessionId);

/** A desktop session that spends past a budget of five tokens, and the link its notification carries, opened as a browser does. */
async function pausedWithLink() {
  const created = await test.execute("remote-session:create", { target: "desktop", prompt: "spend far more than five tokens here", budget: { tokens: 5 } });
  const sessionId = String(created.structuredContent.sessionId);
  await hooks.until(() => hooksOf(sessionId).some((hook) => hook.data.answerUrl));
  const [hook] = hooksOf(sessionId);
  expect(hook).toMatchObject({ type: "session.budget_reached", data: { kind: "budget_reached" } });
  const answerUrl = hook!.data.answerUrl!;
  const page = await fetch(answerUrl);
  expect(page.status).toBe(200);
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!;
  const post = (choice: Record<string, string>) =>
    fetch(answerUrl, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ antiForgery: field("antiForgery"), nonce: field("nonce"), ...choice }),
    });
  return { sessionId, html, post };
}

it("tells the member once, and raises the budget from the link's page", async () => {
  const { sessionId, html, post } = await pausedWithLink();
  // Three choices, each from what was spent (past the budget of 5): any of them ends the pause.
  const spent = ((await test.execute("remote-session:read", { sessionId, from: "end" })).structuredContent as Record<string, any>).pending.spent.tokens;
  const choices = [...html.matchAll(/name="raise" value="tokens:(\d+)">Add \d+ tokens \(to (\d+) tokens\)/g)].map((m) => Number(m[1]));
  expect(choices).toEqual([Math.ceil(spent + 2.5), spent + 5, spent + 15]);
  expect(html).toContain("Stop the session");
  const answered = await post({ raise: "tokens:1000" });
  expect(answered.status).toBe(200);
  expect(await answered.text()).toContain("Answer sent");
  const read = (await test.execute("remote-session:read", { sessionId, from: "end" })).structuredContent as Record<string, any>;
  expect(read.budget).toEqual({ tokens: 1_000 });
  expect(read.pending).toBeUndefined();
  expect(hooksOf(sessionId)).toHaveLength(1);
}, 60_000);

it("stops the session from the link's page", async () => {
  const { sessionId, post } = await pausedWithLink();
  const stopped = await post({ stop: "1" });
  expect(stopped.status).toBe(200);
  expect(await stopped.text()).toContain("Session stopped");
  const read = (await test.execute("remote-session:read", { sessionId, from: "end" })).structuredContent as Record<string, any>;
  expect(read.state).toBe("stopped");
  expect(read.pending).toBeUndefined();
}, 60_000);

it("refuses a raise that leaves the budget reached, and keeps the link for another try", async () => {
  const { sessionId, post } = await pausedWithLink();
  const low = await post({ raise: "tokens:6" });
  expect(low.status).toBe(400);
  const read = (await test.execute("remote-session:read", { sessionId, from: "end" })).structuredContent as Record<string, any>;
  expect(read.pending).toMatchObject({ kind: "budget" });
  expect((await post({ raise: "tokens:500" })).status).toBe(200);
}, 60_000);
