import { migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailNotifier } from "./email-notifier.js";
import { enqueueNotification } from "./enqueue-notification.js";
import { type NotificationDrain, startNotificationDrain } from "./notification-drain.js";
import type { NotificationEvent } from "./notification-event.js";
import { NotifyError } from "./notifier.js";
import { createNotifyChannels } from "./notify-channels.js";
import { startSmtpReceiver } from "./testing/receivers.js";

// Email through nodemailer to a real SMTP server on 127.0.0.1, drained from a real PostgreSQL.
const db = useTestDatabase();
const ORG = "org_email";
let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
let drain: NotificationDrain;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  await migrate(db.current.sql);
  const notifier = emailNotifier({ transport: { host: "127.0.0.1", port: smtp.port, secure: false }, from: "OpenWork <notify@openwork.test>" });
  drain = await startNotificationDrain({ sql: db.current.sql, notifiers: [notifier], intervalMs: 20, backoff: () => 0 });
});
afterAll(async () => {
  await drain?.close();
  await smtp?.close();
});

const waiting = (id: string, memberId: string): NotificationEvent => ({
  id,
  kind: "waiting_input",
  organizationId: ORG,
  memberId,
  sessionId: "rs_mail",
  title: "Migrate the billing tables",
  state: "waiting_input",
  text: { question: "Drop the legacy_invoices table?", prompt: "Please migrate billing to the new schema" },
  occurredAt: new Date("2026-12-01T12:00:00Z"),
});

/** The unfolded header lines and the body of a raw message. */
const parts = (raw: string) => {
  const [head = "", ...body] = raw.split("\r\n\r\n");
  return { head: head.replace(/\r\n[ \t]+/g, " "), body: body.join("\r\n\r\n") };
};

/** The message the SMTP server received for a `waiting_input` event of a member with one email channel. */
async function mailed(memberId: string, target: string, allowText: boolean) {
  await createNotifyChannels(db.current.sql).create(ORG, { memberId, kind: "email", target, eventKinds: ["waiting_input"], allowText });
  await enqueueNotification(db.current.sql, waiting(`evt_mail_${memberId}`, memberId));
  const count = smtp.messages.length + 1;
  drain.wake();
  await smtp.next(count);
  return smtp.messages[count - 1]!;
}

describe("the email notifier", () => {
  it("mails the member: the subject names the session and what happened; no prompt text where the channel does not allow it", async () => {
    const message = await mailed("member_private", "private@example.com", false);
    const { head, body } = parts(message.raw);
    expect(message.to).toEqual(["private@example.com"]);
    expect(head).toContain("Subject: Migrate the billing tables is waiting for your answer");
    expect(head).toMatch(/X-Notification-Id: evt_mail_member_private/i);
    expect(head).toMatch(/Message-ID: <evt_mail_member_private\.nch_[0-9a-z]{26}@openwork\.test>/i);
    expect(body).toContain("State: waiting_input");
    expect(message.raw).not.toContain("legacy_invoices");
    expect(message.raw).not.toContain("migrate billing");
  });

  it("carries what the session asks where the member allowed text", async () => {
    const { body } = parts((await mailed("member_open", "open@example.com", true)).raw);
    expect(body).toContain("It asks:\r\nDrop the legacy_invoices table?");
    expect(body).toContain("Please migrate billing to the new schema");
  });

  it("throws a retryable NotifyError when no SMTP server answers", async () => {
    const closed = await startSmtpReceiver();
    await closed.close();
    const notifier = emailNotifier({ transport: { host: "127.0.0.1", port: closed.port }, from: "notify@openwork.test" });
    const delivery = {
      event: waiting("evt_unreachable", "m"),
      channel: { id: "nch_x", kind: "email" as const, target: "x@example.com", secret: null, allowText: false },
      attempt: 1,
    };
    const error = await notifier.send(delivery, AbortSignal.timeout(5_000)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotifyError);
    expect(error).toMatchObject({ code: "unreachable", retryable: true });
  });
});
