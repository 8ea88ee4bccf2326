import { startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { createAskingEngine } from "./testing/asking-engine.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { addWebhookChannel, startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// Ten POSTs of one answer link at once, while the desktop takes its time to take the answer: one
// answers, the others are refused at once (409), and the gateway's pool (5 connections here)
// still serves other calls meanwhile. The redeem once held a transaction across the answer, so
// every POST held a connection waiting on the link's row and the answer itself found none.
const db = useTestDatabase();
const alice = fixedDevMember("answer_burst");
const asking = createAskingEngine();
const RESPOND_DELAY_MS = 1_500;
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
let hooks: WebhookReceiver;
// When the desktop got the answer to take, and whether it took it yet.
const inFlight = (() => {
  let start!: () => void;
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  return { started, start, done: false };
})();

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, alice, {
    notify: { intervalMs: 100, allowPrivateNetworks: true, answerLinkSecret: "answer-burst-test-link-secret-0123456789abcdef" },
  });
  // A slow desktop: the answer reaches the engine only after a while, as over a slow relay.
  const slow = {
    ...asking.engine,
    respond: async (input: Parameters<typeof asking.engine.respond>[0]) => {
      inFlight.start();
      await new Promise((resolve) => setTimeout(resolve, RESPOND_DELAY_MS));
      inFlight.done = true;
      return asking.engine.respond(input);
    },
  };
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "answer-burst-desktop-01",
    name: "Burst desktop",
    engine: slow,
  });
  await addWebhookChannel(test.gateway.baseUrl, alice.sessionToken, hooks.url("/burst"), ["waiting_input"]);
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
  await hooks?.close();
});

const ok = async (name: string, body: Record<string, unknown>) => {
  const result = await test.execute(name, body);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
};

it("answers once of ten concurrent POSTs of one link; the others get 409 at once and the pool stays free", async () => {
  const { sessionId } = await ok("remote-session:create", { target: "desktop", title: "Burst", prompt: "ASK_BASH: burst" });
  const data = (hook: { body: string }) => (JSON.parse(hook.body) as { data: { sessionId: string; answerUrl?: string } }).data;
  await hooks.until((received) => received.some((hook) => data(hook).sessionId === sessionId && data(hook).answerUrl));
  const answerUrl = data(hooks.received.find((hook) => data(hook).sessionId === sessionId && data(hook).answerUrl)!).answerUrl!;
  // The page once, as a browser opens it: its cookie and its hidden fields.
  const page = await fetch(answerUrl);
  expect(page.status).toBe(200);
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!;
  const form = new URLSearchParams({ antiForgery: field("antiForgery"), nonce: field("nonce"), permission: "once" });
  const post = async () => {
    const response = await fetch(answerUrl, { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: form });
    return { status: response.status, at: Date.now(), text: await response.text() };
  };

  const started = Date.now();
  const posts = Array.from({ length: 10 }, post);
  // While the one answer is on its way to the desktop: the pool still answers another member call.
  await inFlight.started;
  const read = await ok("remote-session:read", { sessionId, from: "end", limit: 1 });
  expect(inFlight.done).toBe(false);
  expect(read.state).toBe("waiting_input");
  const outcomes = await Promise.all(posts);
  const statuses = outcomes.map((outcome) => outcome.status).sort();
  expect(statuses).toEqual([200, ...Array.from({ length: 9 }, () => 409)]);
  // The refusals came before the answer did: none waited on the first.
  for (const refused of outcomes.filter((outcome) => outcome.status === 409)) {
    expect(refused.text).toContain("Answer in progress");
    expect(refused.at - started).toBeLessThan(RESPOND_DELAY_MS);
  }
  expect(asking.answers).toEqual([{ requestId: read.pending.id, answer: { permission: "once" } }]);
  // Spent for good: the link again is "already used".
  expect((await fetch(answerUrl)).status).toBe(410);
}, 60_000);
