import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { ASKED, createAskingEngine } from "./testing/asking-engine.js";
import { startTestGateway } from "./testing/test-gateway.js";

// Email through the gateway: a member's email channel (possible only because this gateway has
// SMTP) gets a real mail at a real SMTP server when their desktop session asks, with the
// question (the channel allows text) and an answer link that opens the page.
const db = useTestDatabase();
const alice = fixedDevMember("mail_alice");
const mails: { to: string[]; raw: string }[] = [];
let smtp: SMTPServer;
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  });
  smtp.listen(0, "127.0.0.1");
  await once(smtp.server, "listening");
  const { port } = smtp.server.address() as AddressInfo;
  test = await startTestGateway(db.current.url, alice, {
    notify: { smtp: { host: "127.0.0.1", port, secure: false }, from: "OpenWork <notify@openwork.test>", intervalMs: 100 },
  });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "mail-desktop-0001",
    name: "Mail",
    engine: createAskingEngine().engine,
  });
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

it("mails a waiting question with its text and an answer link that opens the page", async () => {
  const created = await fetch(`${test.gateway.baseUrl}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "email", target: "alice@example.com", eventKinds: ["waiting_input"], allowText: true }),
  });
  expect(created.status).toBe(201);
  expect(await created.json()).not.toHaveProperty("secret");

  const session = await test.execute("remote-session:create", { target: "desktop", title: "Mail colour", prompt: "ASK_COLOUR please" });
  const sessionId = String(session.structuredContent.sessionId);
  const deadline = Date.now() + 20_000;
  while (!mails.some((mail) => mail.raw.includes(sessionId))) {
    if (Date.now() > deadline) throw new Error(`no mail for ${sessionId}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const mail = mails.find((m) => m.raw.includes(sessionId))!;
  expect(mail.to).toEqual(["alice@example.com"]);
  // Quoted-printable may fold long lines: read the body unfolded.
  const body = mail.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
  expect(body).toContain("Subject: Mail colour is waiting for your answer");
  expect(body).toContain(ASKED.question);
  const link = /(http:\/\/127\.0\.0\.1:\d+\/notify\/answer\/[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})/.exec(body)?.[1];
  expect(link).toBeDefined();
  const page = await fetch(link!);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(ASKED.question);
  await test.execute("remote-session:stop", { sessionId });
}, 40_000);
