import { randomUUID } from "node:crypto";
import { createSessionLedger } from "@openwork/remote-session-core";
import { describe, expect, it } from "vitest";
import { emailNotifier } from "./email-notifier.js";
import { type NotificationDescription, startNotificationDrain } from "./notification-drain.js";
import type { NotificationEvent } from "./notification-event.js";
import type { DeliveryChannel } from "./notifier.js";
import { createNotifyChannels } from "./notify-channels.js";
import { closeAfterEach, useNotifyDatabase } from "./testing/notify-database.js";
import { startSmtpReceiver, startWebhookReceiver } from "./testing/receivers.js";
import { webhookNotifier } from "./webhook-notifier.js";

// The drain's describe: events the trigger wrote carry no text; at send time the host adds the
// question and an answer link, only where the channel allows text (the page shows the request).
const db = useNotifyDatabase();
const closing = closeAfterEach();
const QUESTION = "May I delete the build folder?";

/** A member with a text-allowing webhook, a text-free webhook and a text-free email, and a running session of theirs. */
async function subscribedSession(hookUrl: string) {
  const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_described" };
  const channels = createNotifyChannels(db.current.sql, { allowPrivateNetworks: true });
  const common = { memberId: scope.userId, eventKinds: ["waiting_input" as const] };
  await channels.create(scope.organizationId, { ...common, kind: "webhook", target: `${hookUrl}?text=yes`, allowText: true });
  await channels.create(scope.organizationId, { ...common, kind: "webhook", target: `${hookUrl}?text=no` });
  await channels.create(scope.organizationId, { ...common, kind: "email", target: "member@example.com" });
  const session = await createSessionLedger(db.current.sql).insert(scope, { target: "desktop", title: "Clean up", state: "running" });
  return { organizationId: scope.organizationId, id: session.id };
}

async function servers() {
  const hook = await startWebhookReceiver();
  const smtp = await startSmtpReceiver();
  closing(() => hook.close());
  closing(() => smtp.close());
  return { hook, smtp };
}

async function drain(
  describeDelivery: (event: NotificationEvent, channel: DeliveryChannel) => Promise<NotificationDescription | undefined>,
  port: number,
  sendTimeoutMs = 10_000,
) {
  const notifiers = [
    webhookNotifier({ allowPrivateNetworks: true }),
    emailNotifier({ transport: { host: "127.0.0.1", port, secure: false }, from: "notify@openwork.test" }),
  ];
  const started = await startNotificationDrain({ sql: db.current.sql, notifiers, intervalMs: 20, backoff: () => 0, sendTimeoutMs, describe: describeDelivery });
  closing(() => started.close());
}

describe("describe at send time", () => {
  it("adds the question and the answer link only to the channel that allows text; the others say it waits, without a link", async () => {
    const { hook, smtp } = await servers();
    const key = await subscribedSession(hook.url);
    const seen: string[] = [];
    await drain(async (event, channel) => {
      seen.push(`${event.kind}:${channel.kind}:${channel.allowText}`);
      return { text: { question: QUESTION }, answerUrl: `https://gateway.example/answer/${event.sessionId}` };
    }, smtp.port);
    await createSessionLedger(db.current.sql).update(key, { state: "waiting_input" });
    await hook.next(2);
    await smtp.next(1);
    const bodies = Object.fromEntries(
      hook.received.map((r) => [r.body.includes(QUESTION) ? "withText" : "withoutText", JSON.parse(r.body) as { data: Record<string, unknown> }]),
    );
    const answerUrl = `https://gateway.example/answer/${key.id}`;
    expect(bodies.withText?.data).toMatchObject({ kind: "waiting_input", answerUrl, text: { question: QUESTION } });
    expect(bodies.withoutText?.data).toMatchObject({ kind: "waiting_input" });
    expect(bodies.withoutText?.data).not.toHaveProperty("text");
    expect(bodies.withoutText?.data).not.toHaveProperty("answerUrl");
    const mail = smtp.messages[0]!.raw.replace(/=\r\n/g, "").replace(/\r\n/g, "\n");
    expect(mail).not.toContain(answerUrl);
    expect(mail).not.toContain(QUESTION);
    expect(mail).toContain("Answer it in OpenWork (open the session there) or through your agent.");
    // Not even asked for the no-text channels: no link is minted for them.
    expect(seen).toEqual(["waiting_input:webhook:true"]);
  });

  it("a describe that outlives the send timeout counts as a failed try: retried, then sent", async () => {
    const { hook, smtp } = await servers();
    const key = await subscribedSession(hook.url);
    let calls = 0;
    await drain(
      async () => {
        calls++;
        // The first try never answers: without the timeout it would hold its claim.
        if (calls <= 1) await new Promise(() => {});
        return { answerUrl: "https://gateway.example/answer/late" };
      },
      smtp.port,
      200,
    );
    await createSessionLedger(db.current.sql).update(key, { state: "waiting_input" });
    await hook.next(2);
    await smtp.next(1);
    const rows = await db.current.sql`select status, attempts, last_error as "lastError" from notify_delivery where organization_id = ${key.organizationId}`;
    // Only the channel that allows text is described: it alone waited for a second try, and alone carries the link.
    expect(rows.map((row) => row.attempts).sort()).toEqual([1, 1, 2]);
    expect(hook.received.map((r) => (JSON.parse(r.body) as { data: { answerUrl?: string } }).data.answerUrl).sort()).toEqual([
      "https://gateway.example/answer/late",
      undefined,
    ]);
  });

  it("a describe that throws counts as a failed try: retried, then sent", async () => {
    const { hook, smtp } = await servers();
    const key = await subscribedSession(hook.url);
    let calls = 0;
    await drain(async () => {
      calls++;
      if (calls <= 1) throw new Error("the session could not be read");
      return undefined;
    }, smtp.port);
    await createSessionLedger(db.current.sql).update(key, { state: "waiting_input" });
    await hook.next(2);
    await smtp.next(1);
    await expect
      .poll(() => db.current.sql`select status, attempts from notify_delivery where organization_id = ${key.organizationId} order by attempts`)
      .toEqual([
        { status: "sent", attempts: 1 },
        { status: "sent", attempts: 1 },
        { status: "sent", attempts: 2 },
      ]);
    expect(hook.received.every((r) => !("answerUrl" in (JSON.parse(r.body) as { data: object }).data))).toBe(true);
  });
});
