import { existsSync } from "node:fs";
import { startDesktopRunner } from "@openwork/desktop-runner";
import { createAnswerLinks } from "@openwork/session-notify";
import { useTestDatabase } from "@openwork/test-postgres";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember, userIdOf } from "./dev-members.js";
import { ASKED, createAskingEngine } from "./testing/asking-engine.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// The answer page of a notification in headless Chromium (Debian's), against a real gateway, a
// real PostgreSQL and the reference desktop runner whose engine asks: the link comes from the
// webhook the gateway sent, as a member's phone would get it.
const CHROMIUM = "/usr/bin/chromium";
const LINK_SECRET = "answer-page-test-link-secret-0123456789abcdef";
const db = useTestDatabase();
const alice = fixedDevMember("answer_alice");
// In Alice's organization: only the link's member keeps them apart.
const bob = { ...fixedDevMember("answer_bob"), organizationId: alice.organizationId };
const asking = createAskingEngine();
const logLines: string[] = [];
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
let hooks: WebhookReceiver;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium)`);
  hooks = await startWebhookReceiver();
  const log = (m: string, f?: Record<string, unknown>) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`);
  test = await startTestGateway(db.current.url, alice, {
    members: () => [alice, bob],
    notify: { intervalMs: 100, allowPrivateNetworks: true, answerLinkSecret: LINK_SECRET },
    logger: { info: log, warn: log, error: log },
  });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "answer-page-desktop-01",
    name: "Alice's desktop",
    engine: asking.engine,
  });
  // Two channels: one without text (the default), one that allows the question's text.
  for (const [path, allowText] of [
    ["/alice", false],
    ["/alice-text", true],
  ] as const) {
    const channel = await fetch(`${test.gateway.baseUrl}/member/notify/channels`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "webhook", target: hooks.url(path), eventKinds: ["waiting_input"], allowText }),
    });
    expect(channel.status).toBe(201);
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await runner?.stop();
  await test?.close();
  await hooks?.close();
  // What the member answered, and what the session asked, never reach a log line.
  const logs = logLines.join("\n");
  expect(logs).not.toContain("Turquoise");
  expect(logs).not.toContain(ASKED.command);
});

const ok = async (name: string, body: Record<string, unknown>) => {
  const result = await test.execute(name, body);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
};
const readUntil = async (sessionId: string, done: (read: Record<string, any>) => boolean) => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const read = await ok("remote-session:read", { sessionId, waitMs: 1_000, from: "end" });
    if (done(read)) return read;
    if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${read.state}`);
  }
};

/**
 * A desktop session that waits on the human (after a first turn `warmUp`), the answer link its
 * waiting_input webhook carried to the channel that allows text, and the webhook of the channel
 * without text (which carries no link: the page shows the request).
 */
async function askingSession(prompt: string, title: string, warmUp?: string) {
  const { sessionId } = await ok("remote-session:create", { target: "desktop", title, prompt: warmUp ?? prompt });
  if (warmUp) {
    await readUntil(sessionId, (r) => r.state === "idle");
    await ok("remote-session:send", { sessionId, prompt });
  }
  const waiting = await readUntil(sessionId, (r) => r.state === "waiting_input");
  const sent = (hook: { body: string }) => (JSON.parse(hook.body) as { data: { sessionId: string; answerUrl?: string } }).data;
  const mine = (path: string) => (hook: { path: string; body: string }) => hook.path === path && sent(hook).sessionId === sessionId;
  await hooks.until((received) => received.some(mine("/alice")) && received.some((hook) => mine("/alice-text")(hook) && sent(hook).answerUrl));
  const hook = hooks.received.find(mine("/alice"))!;
  const withText = hooks.received.find(mine("/alice-text"))!;
  return { sessionId: sessionId as string, requestId: waiting.pending.id as string, answerUrl: sent(withText).answerUrl!, hook };
}

async function open(url: string): Promise<{ page: Page; status: number }> {
  const page = await browser.newPage();
  const response = await page.goto(url);
  return { page, status: response!.status() };
}
const noticeOf = (page: Page) => page.locator("#notice").textContent();

describe("a permission", () => {
  let asked: Awaited<ReturnType<typeof askingSession>>;
  beforeAll(async () => {
    asked = await askingSession("ASK_BASH: clean and release", "Release build", "Say hello first");
  }, 60_000);

  it("is linked only where text is allowed, and the page shows the request, the title and the last messages", async () => {
    expect(asked.answerUrl).toMatch(new RegExp(`^${test.gateway.baseUrl}/notify/answer/[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}$`));
    // The channel without text: neither the question nor a link to the page that shows it.
    expect(asked.hook.body).not.toContain(ASKED.command);
    expect(JSON.parse(asked.hook.body).data).not.toHaveProperty("answerUrl");
    const { page, status } = await open(asked.answerUrl);
    expect(status).toBe(200);
    expect(await page.locator("#session-title").textContent()).toBe("Release build");
    expect(await page.locator("#request").textContent()).toBe(ASKED.command);
    // The first turn's reply (the desktop keeps prompts' text to itself: a read shows their place only).
    expect(await page.locator(".msg.assistant").first().textContent()).toContain("echo: Say hello first");
    expect(await page.getByRole("button").allInnerTexts()).toEqual(["Allow once", "Always allow", "Reject"]);
    await page.close();
  });

  it("shows the agent's read that the member was notified, once the webhook was sent", async () => {
    let read: Record<string, any> = {};
    for (let i = 0; i < 50 && read.notified?.length !== 2; i++) {
      read = await ok("remote-session:read", { sessionId: asked.sessionId, from: "end", limit: 1 });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // One per channel: both webhooks.
    const sent = { channel: "webhook", at: expect.any(String), kind: "waiting_input" };
    expect(read.notified).toEqual([sent, sent]);
  });

  it("is answered once through respond; the same form again, and the link again, are refused", async () => {
    // Two tabs on the link: the second keeps its form for the replay.
    const first = await open(asked.answerUrl);
    const second = await open(asked.answerUrl);
    const answered = first.page.waitForResponse((r) => r.request().method() === "POST");
    await first.page.getByRole("button", { name: "Allow once" }).click();
    expect((await answered).status()).toBe(200);
    expect(await noticeOf(first.page)).toContain("Your answer was sent");
    expect(asking.answers).toContainEqual({ requestId: asked.requestId, answer: { permission: "once" } });
    const done = await readUntil(asked.sessionId, (r) => r.state === "idle");
    expect(done.finalAssistantText).toBe('answered: {"permission":"once"}');

    const replay = second.page.waitForResponse((r) => r.request().method() === "POST");
    await second.page.getByRole("button", { name: "Always allow" }).click();
    expect((await replay).status()).toBe(410);
    expect(await noticeOf(second.page)).toContain("already used");
    const again = await open(asked.answerUrl);
    expect(again.status).toBe(410);
    expect(asking.answers.filter((a) => a.requestId === asked.requestId)).toHaveLength(1);
    for (const page of [first.page, second.page, again.page]) await page.close();
  }, 30_000);
});

it("answers a question with the member's own words", async () => {
  const asked = await askingSession("ASK_COLOUR for the header", "Header colour");
  // The channel that allows text got the question (read from the session at send time); the other one did not.
  await hooks.until((received) => received.some((hook) => hook.path === "/alice-text" && hook.body.includes(asked.sessionId)));
  const withText = hooks.received.find((hook) => hook.path === "/alice-text" && hook.body.includes(asked.sessionId))!;
  expect(JSON.parse(withText.body).data.text).toEqual({ question: `Colour: ${ASKED.question}` });
  expect(asked.hook.body).not.toContain(ASKED.question);
  const { page } = await open(asked.answerUrl);
  expect(await page.locator("#request").textContent()).toBe(ASKED.question);
  expect(await page.getByRole("button").allInnerTexts()).toEqual([...ASKED.options, "Send answer"]);
  await page.getByRole("textbox", { name: "Your answer" }).fill("Turquoise");
  await page.getByRole("button", { name: "Send answer" }).click();
  await page.locator("#notice").waitFor();
  expect(await noticeOf(page)).toContain("Your answer was sent");
  const done = await readUntil(asked.sessionId, (r) => r.state === "idle");
  expect(done.finalAssistantText).toBe('answered: {"text":"Turquoise"}');
  await page.close();
}, 60_000);

describe("refused links", () => {
  let asked: Awaited<ReturnType<typeof askingSession>>;
  beforeAll(async () => {
    asked = await askingSession("ASK_BASH: the refusals", "Refusals");
  }, 60_000);
  afterAll(async () => {
    await ok("remote-session:stop", { sessionId: asked.sessionId });
  });
  /** A link to the same request minted as the gateway would (its secret), for `memberId` at `mintedAt`. */
  const mint = async (memberId: string, mintedAt = new Date()) => {
    const links = createAnswerLinks({ sql: test.sql, secret: LINK_SECRET, now: () => mintedAt });
    const { token } = await links.mint({ organizationId: alice.organizationId, memberId, sessionId: asked.sessionId, requestId: asked.requestId });
    return `${test.gateway.baseUrl}/notify/answer/${token}`;
  };
  const stillWaiting = async () => expect((await ok("remote-session:read", { sessionId: asked.sessionId })).state).toBe("waiting_input");

  it("refuses an expired link", async () => {
    const { page, status } = await open(await mint(userIdOf(alice), new Date(Date.now() - 16 * 60_000)));
    expect(status).toBe(410);
    expect(await noticeOf(page)).toContain("expired");
    expect(await page.getByRole("button").count()).toBe(0);
    await page.close();
  });

  it("refuses a link minted for another member of the organization: the session is not theirs", async () => {
    const { page, status } = await open(await mint(userIdOf(bob)));
    expect(status).toBe(404);
    expect(await page.getByRole("button").count()).toBe(0);
    await page.close();
    await stillWaiting();
  });

  it("refuses a tampered link: another signature, another id", async () => {
    const [base, token] = asked.answerUrl.split("/notify/answer/") as [string, string];
    const [id, signature] = token.split(".") as [string, string];
    const flip = (text: string) => `${text.slice(0, -2)}${text.at(-2) === "A" ? "B" : "A"}${text.at(-1)}`;
    for (const tampered of [`${id}.${flip(signature)}`, `${flip(id)}.${signature}`, `${id}.${signature}x`]) {
      const { page, status } = await open(`${base}/notify/answer/${tampered}`);
      expect(status).toBe(404);
      expect(await noticeOf(page)).toContain("not valid");
      await page.close();
    }
  });

  it("refuses a form whose anti-forgery field is not the page's, and a POST without the page's cookie", async () => {
    const { page } = await open(asked.answerUrl);
    await page.locator('input[name="antiForgery"]').evaluate((input) => {
      (input as HTMLInputElement).value = "forged-value";
    });
    const posted = page.waitForResponse((r) => r.request().method() === "POST");
    await page.getByRole("button", { name: "Allow once" }).click();
    expect((await posted).status()).toBe(403);
    await page.close();
    // The right fields from outside the browser that rendered the page: no SameSite cookie, refused.
    const fields = await (await open(asked.answerUrl)).page.evaluate(() =>
      Object.fromEntries([...document.querySelectorAll<HTMLInputElement>("input[type=hidden]")].map((input) => [input.name, input.value])),
    );
    const outside = await fetch(asked.answerUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, permission: "once" }),
    });
    expect(outside.status).toBe(403);
    // A cookie and a field that match each other but that the server never signed for this link:
    // made up, or the page's own nonce with its signature cut off.
    for (const nonce of ["made-up-nonce", "made-up.nonce", fields.nonce!.split(".")[0]!]) {
      const madeUp = await fetch(asked.answerUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: `ow_answer=${nonce}` },
        body: new URLSearchParams({ ...fields, nonce, permission: "once" }),
      });
      expect(madeUp.status).toBe(403);
    }
    await stillWaiting();
    expect(asking.answers.some((a) => a.requestId === asked.requestId)).toBe(false);
  });
});
