import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { enqueueNotification } from "./enqueue-notification.js";
import { type NotificationDrain, type NotificationDrainOptions, startNotificationDrain } from "./notification-drain.js";
import type { NotificationEvent } from "./notification-event.js";
import type { Notifier } from "./notifier.js";
import { createNotifyChannels } from "./notify-channels.js";
import { closeAfterEach, useNotifyDatabase } from "./testing/notify-database.js";
import { startWebhookReceiver } from "./testing/receivers.js";
import { webhookNotifier } from "./webhook-notifier.js";

// The drain to a real HTTP receiver on 127.0.0.1, on a real PostgreSQL: signed, retried, dead, never twice.
const db = useNotifyDatabase();
const closing = closeAfterEach();
const SECRET = `whsec_${Buffer.from("a test secret of thirty-two bytes").toString("base64")}`;

/** A member of an organization of its own, with one webhook channel at `url` taking `turn_idle`. */
async function memberWithWebhook(url: string): Promise<{ organizationId: string; memberId: string }> {
  const organizationId = `org_${randomUUID().slice(0, 8)}`;
  const memberId = "member_hook";
  // The receiver is on 127.0.0.1: both the channel and the notifier opt in to private networks.
  await createNotifyChannels(db.current.sql, { allowPrivateNetworks: true }).create(organizationId, {
    memberId,
    kind: "webhook",
    target: url,
    secret: SECRET,
    eventKinds: ["turn_idle"],
  });
  return { organizationId, memberId };
}

const idleEvent = (id: string, owner: { organizationId: string; memberId: string }): NotificationEvent => ({
  id,
  kind: "turn_idle",
  ...owner,
  sessionId: "rs_hook",
  title: "Refactor the parser",
  state: "idle",
  text: { answer: "Done: the parser is split in three files." },
  occurredAt: new Date("2026-12-01T11:00:00Z"),
});

async function drain(options: Partial<NotificationDrainOptions> = {}): Promise<NotificationDrain> {
  const started = await startNotificationDrain({
    sql: db.current.sql,
    notifiers: [webhookNotifier({ allowPrivateNetworks: true })],
    intervalMs: 20,
    backoff: () => 0,
    ...options,
  });
  closing(() => started.close());
  return started;
}

async function receiver(statuses?: readonly number[]) {
  const started = await startWebhookReceiver(statuses);
  closing(() => started.close());
  return started;
}

const statusOf = (id: string) => db.current.sql`select status, attempts, last_error as "lastError" from notify_delivery where event_id = ${id}`;

describe("the webhook drain", () => {
  it("POSTs the event signed in the Standard Webhooks format, webhook-id = the event id, without text the channel does not allow", async () => {
    const hook = await receiver();
    const owner = await memberWithWebhook(hook.url);
    await enqueueNotification(db.current.sql, idleEvent("evt_signed", owner));
    await drain();
    await hook.next(1);
    const [request] = hook.received;
    const verified = new Webhook(SECRET).verify(request!.body, request!.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(request!.headers["webhook-id"]).toBe("evt_signed");
    expect(verified).toMatchObject({
      type: "session.turn_idle",
      data: { eventId: "evt_signed", sessionId: "rs_hook", title: "Refactor the parser", state: "idle" },
    });
    expect(request!.body).not.toContain("parser is split");
    expect(() => new Webhook(SECRET).verify(request!.body.replace("idle", "failed"), request!.headers as Record<string, string>)).toThrow();
    await expect.poll(() => statusOf("evt_signed")).toEqual([{ status: "sent", attempts: 1, lastError: null }]);
  });

  it("retries a receiver answering 500 twice, then 200: one success, the same webhook-id each time", async () => {
    const hook = await receiver([500, 500, 200]);
    const owner = await memberWithWebhook(hook.url);
    await enqueueNotification(db.current.sql, idleEvent("evt_retried", owner));
    await drain();
    await hook.next(3);
    expect(hook.received.map((r) => [r.status, r.headers["webhook-id"]])).toEqual([
      [500, "evt_retried"],
      [500, "evt_retried"],
      [200, "evt_retried"],
    ]);
    await expect.poll(() => statusOf("evt_retried")).toEqual([{ status: "sent", attempts: 3, lastError: null }]);
    expect(hook.received).toHaveLength(3);
  });

  it("moves a delivery to dead after maxAttempts, visible in stats(); a 4xx goes dead at once", async () => {
    const failing = await receiver([503]);
    const refusing = await receiver([410]);
    const idle = await drain({ notifiers: [] });
    const before = await idle.stats();
    await idle.close();
    await enqueueNotification(db.current.sql, idleEvent("evt_dead", await memberWithWebhook(failing.url)));
    await enqueueNotification(db.current.sql, idleEvent("evt_gone", await memberWithWebhook(refusing.url)));
    const running = await drain({ maxAttempts: 3 });
    await expect.poll(() => statusOf("evt_dead")).toEqual([{ status: "dead", attempts: 3, lastError: "rejected: the webhook answered 503" }]);
    await expect.poll(() => statusOf("evt_gone")).toEqual([{ status: "dead", attempts: 1, lastError: "rejected: the webhook answered 410" }]);
    expect(failing.received).toHaveLength(3);
    expect(refusing.received).toHaveLength(1);
    expect((await running.stats()).dead).toBe(before.dead + 2);
  });

  it("deletes sent deliveries older than keepSentMs, the events none is left of, answer links a day past expiry; keeps dead ones", async () => {
    const owner = await memberWithWebhook("https://example.com/never");
    for (const id of ["evt_old_sent", "evt_old_dead", "evt_recent_sent"]) await enqueueNotification(db.current.sql, idleEvent(id, owner));
    await db.current.sql`
      update notify_delivery set status = case when event_id = 'evt_old_dead' then 'dead' else 'sent' end,
        sent_at = case when event_id = 'evt_recent_sent' then now() else now() - interval '2 days' end
      where organization_id = ${owner.organizationId}`;
    await db.current.sql`update notify_event set created_at = now() - interval '2 days' where organization_id = ${owner.organizationId}`;
    await db.current.sql`
      insert into notify_answer_link (id, organization_id, member_id, session_id, request_id, expires_at)
      values ('old_link_aaaaaaaaaaaaa', ${owner.organizationId}, 'm', 'rs', 'per', now() - interval '25 hours'),
        ('late_link_aaaaaaaaaaaa', ${owner.organizationId}, 'm', 'rs', 'per', now() - interval '23 hours')`;
    await (await drain({ keepSentMs: 86_400_000 })).close();
    const links = await db.current.sql`select id from notify_answer_link where organization_id = ${owner.organizationId}`;
    expect(links.map((link) => link.id)).toEqual(["late_link_aaaaaaaaaaaa"]);
    const rows = await db.current.sql`
      select e.id, d.status from notify_event e left join notify_delivery d on d.organization_id = e.organization_id and d.event_id = e.id
      where e.organization_id = ${owner.organizationId} order by e.id`;
    expect(rows.map((row) => [row.id, row.status])).toEqual([
      ["evt_old_dead", "dead"],
      ["evt_recent_sent", "sent"],
    ]);
  });

  it("sends when its wake source says so, and moves a delivery whose channel was disabled meanwhile to dead, unsent", async () => {
    const hook = await receiver();
    const owner = await memberWithWebhook(hook.url);
    await enqueueNotification(db.current.sql, idleEvent("evt_disabled", owner));
    await db.current.sql`update notify_channel set enabled = false where organization_id = ${owner.organizationId}`;
    let wakeUp!: () => void;
    await drain({ intervalMs: 3_600_000, wake: (drainNow) => ((wakeUp = drainNow), () => {}) });
    // Its first pass at start: the disabled channel's delivery goes dead. Then it sleeps for an hour unless woken.
    await expect.poll(() => statusOf("evt_disabled")).toEqual([{ status: "dead", attempts: 1, lastError: "the channel was disabled before sending" }]);
    await enqueueNotification(db.current.sql, idleEvent("evt_woken", await memberWithWebhook(hook.url)));
    wakeUp();
    await hook.next(1);
    expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_woken"]);
  });

  it("two drainers on one database send each delivery once", async () => {
    const hook = await receiver();
    const owner = await memberWithWebhook(hook.url);
    const ids = Array.from({ length: 40 }, (_, i) => `evt_pair_${i}`);
    await db.current.sql.begin(async (tx) => {
      for (const id of ids) await enqueueNotification(tx, idleEvent(id, owner));
    });
    const other = postgres(db.current.url, { max: 4, onnotice: () => {} });
    closing(() => other.end());
    await Promise.all([drain({ batchSize: 4 }), drain({ sql: other, batchSize: 4 })]);
    await hook.next(ids.length);
    await expect
      .poll(async () => (await db.current.sql`select count(*)::int as n from notify_delivery where event_id like 'evt_pair_%' and status = 'sent'`)[0]?.n)
      .toBe(40);
    expect(hook.received.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort());
  });

  it("one member's receiver that never answers holds only that member's lanes: another member's webhook goes at once", async () => {
    // Takes every request and never answers: each send to it lasts the whole send timeout.
    const hanging = new Map<string, number>();
    const silent = createServer((request) => hanging.set(request.url!, (hanging.get(request.url!) ?? 0) + 1));
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    closing(async () => {
      silent.closeAllConnections();
      silent.close();
    });
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const flooder = await memberWithWebhook(`${silentUrl}/0`);
    for (let channel = 1; channel < 5; channel++) {
      await createNotifyChannels(db.current.sql, { allowPrivateNetworks: true }).create(flooder.organizationId, {
        memberId: flooder.memberId,
        kind: "webhook",
        target: `${silentUrl}/${channel}`,
        secret: SECRET,
        eventKinds: ["turn_idle"],
      });
    }
    // 16 events to five channels: 80 deliveries that each take the 10 s send timeout.
    await db.current.sql.begin(async (tx) => {
      for (let i = 0; i < 16; i++) await enqueueNotification(tx, idleEvent(`evt_flood_${i}`, flooder));
    });
    const hook = await receiver();
    const bystander = await memberWithWebhook(hook.url);
    await drain({ sendTimeoutMs: 10_000 });
    await expect.poll(() => [...hanging.values()].reduce((sum, n) => sum + n, 0)).toBe(4);
    const enqueued = performance.now();
    await enqueueNotification(db.current.sql, idleEvent("evt_bystander", bystander));
    await hook.next(1);
    // Before lanes, it waited for the flood's batches to time out: 16 at a time, 10 s each.
    expect(performance.now() - enqueued).toBeLessThan(2_000);
    expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_bystander"]);
    // The flooder's lanes: four sends in flight for the member, at most two to any one channel.
    expect([...hanging.values()].reduce((sum, n) => sum + n, 0)).toBe(4);
    expect(Math.max(...hanging.values())).toBeLessThanOrEqual(2);
    // The flood ends here, not in later tests' drains: its sends fail at once and its rows go.
    silent.closeAllConnections();
    await db.current.sql`delete from notify_event where organization_id = ${flooder.organizationId}`;
  });

  it("sends what a claim left for a full lane as soon as the lane has room, not at the next interval", async () => {
    // Answers each request after 100 ms: the channel's lane (2 sends) is full while they last.
    let answered = 0;
    const slow = createServer((request, response) => {
      request.resume();
      request.on("end", () => setTimeout(() => response.writeHead(200).end(() => answered++), 100));
    });
    slow.listen(0, "127.0.0.1");
    await once(slow, "listening");
    closing(async () => {
      slow.closeAllConnections();
      slow.close();
    });
    const owner = await memberWithWebhook(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`);
    await db.current.sql.begin(async (tx) => {
      for (let i = 0; i < 6; i++) await enqueueNotification(tx, idleEvent(`evt_lane_${i}`, owner));
    });
    const started = performance.now();
    // No interval within the test: only the lane's room can send the last four.
    await drain({ intervalMs: 60_000 });
    await expect.poll(() => answered, { timeout: 5_000 }).toBe(6);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("sends nothing for an enqueue whose transaction rolled back", async () => {
    const hook = await receiver();
    const owner = await memberWithWebhook(hook.url);
    await db.current.sql
      .begin(async (tx) => {
        await enqueueNotification(tx, idleEvent("evt_rolled_back", owner));
        throw new Error("crash before commit");
      })
      .catch(() => {});
    await enqueueNotification(db.current.sql, idleEvent("evt_committed_after", owner));
    await drain();
    await hook.next(1);
    await expect.poll(() => statusOf("evt_committed_after")).toEqual([{ status: "sent", attempts: 1, lastError: null }]);
    expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_committed_after"]);
  });

  it("a drainer killed after sending, before marking sent: resent once after restart, with the same webhook-id", async () => {
    const hook = await receiver();
    const owner = await memberWithWebhook(hook.url);
    await enqueueNotification(db.current.sql, idleEvent("evt_crash", owner));
    // The first drainer's process dies right after the receiver took the request: its connection is gone.
    const doomed = postgres(db.current.url, { max: 2, onnotice: () => {} });
    const real = webhookNotifier({ allowPrivateNetworks: true });
    let killed!: () => void;
    const died = new Promise<void>((resolve) => (killed = resolve));
    const dying: Notifier = {
      kind: "webhook",
      send: async (delivery, signal) => {
        await real.send(delivery, signal);
        await doomed.end({ timeout: 0 });
        killed();
      },
    };
    const first = await startNotificationDrain({ sql: doomed, notifiers: [dying], intervalMs: 20, sendTimeoutMs: 100 });
    await died;
    await first.close();
    expect(await statusOf("evt_crash")).toEqual([{ status: "pending", attempts: 1, lastError: null }]);
    // The restart: its claim lapses (twice the send timeout), and another drainer sends it again.
    await drain();
    await hook.next(2);
    await expect.poll(() => statusOf("evt_crash")).toEqual([{ status: "sent", attempts: 2, lastError: null }]);
    expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_crash", "evt_crash"]);
  });
});
