import { randomUUID } from "node:crypto";
import { createSessionLedger } from "@openwork/remote-session-core";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { type NotificationDrainOptions, startNotificationDrain } from "./notification-drain.js";
import { createNotifyChannels } from "./notify-channels.js";
import { closeAfterEach, useNotifyDatabase } from "./testing/notify-database.js";

// request_overdue: the drain tells the member of a session still waiting_input after
// overdueAfterMs, once per waiting episode, however many replicas drain.
const db = useNotifyDatabase();
const closing = closeAfterEach();
const OVERDUE_MS = 300;

/** A member with a channel taking request_overdue, and a session of theirs that is `running`. */
async function runningSession() {
  const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_overdue" };
  await createNotifyChannels(db.current.sql).create(scope.organizationId, {
    memberId: scope.userId,
    kind: "email",
    target: "o@example.com",
    eventKinds: ["request_overdue"],
  });
  const session = await createSessionLedger(db.current.sql).insert(scope, { target: "desktop", title: "Wait for me", state: "running" });
  const key = { organizationId: scope.organizationId, id: session.id };
  const move = async (state: "waiting_input" | "running") => expect(await createSessionLedger(db.current.sql).update(key, { state })).not.toBeNull();
  return { key, move };
}

async function drain(options: Partial<NotificationDrainOptions> = {}) {
  // No notifier: the deliveries stay pending, so the test reads the outbox as the scan left it.
  const started = await startNotificationDrain({ sql: db.current.sql, notifiers: [], intervalMs: 20, overdueAfterMs: OVERDUE_MS, ...options });
  closing(() => started.close());
  return started;
}

const overdueOf = (key: { organizationId: string; id: string }) =>
  db.current.sql<{ id: string; deliveries: number }[]>`
    select e.id, (select count(*)::int from notify_delivery d where d.organization_id = e.organization_id and d.event_id = e.id) as deliveries
    from notify_event e where e.organization_id = ${key.organizationId} and e.kind = 'request_overdue' order by e.created_at`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("request_overdue", () => {
  it("is enqueued once for a session waiting longer than overdueAfterMs, with two drainers on one database", async () => {
    const session = await runningSession();
    await session.move("waiting_input");
    const other = postgres(db.current.url, { max: 2, onnotice: () => {} });
    closing(() => other.end());
    await Promise.all([drain(), drain({ sql: other })]);
    await expect.poll(() => overdueOf(session.key), { timeout: 5_000 }).toHaveLength(1);
    // Many passes later, still one.
    await sleep(OVERDUE_MS * 2);
    const events = await overdueOf(session.key);
    expect(events).toEqual([{ id: expect.stringMatching(new RegExp(`^${session.key.id}:overdue:\\d+$`)), deliveries: 1 }]);
  });

  it("is not enqueued for a session answered in time; a new waiting episode is told again", async () => {
    const answered = await runningSession();
    const twice = await runningSession();
    await answered.move("waiting_input");
    await twice.move("waiting_input");
    await answered.move("running");
    await drain();
    await expect.poll(() => overdueOf(twice.key), { timeout: 5_000 }).toHaveLength(1);
    await twice.move("running");
    await twice.move("waiting_input");
    await expect.poll(() => overdueOf(twice.key), { timeout: 5_000 }).toHaveLength(2);
    const [first, second] = await overdueOf(twice.key);
    expect(first?.id).not.toBe(second?.id);
    expect(await overdueOf(answered.key)).toEqual([]);
  });

  it("waits overdueAfterMs: a session waiting for less is not told yet", async () => {
    const session = await runningSession();
    await session.move("waiting_input");
    await drain({ overdueAfterMs: 60_000 });
    await sleep(OVERDUE_MS * 2);
    expect(await overdueOf(session.key)).toEqual([]);
  });

  it("is looked for at most once per intervalMs, however often the drain is woken", async () => {
    let scans = 0;
    const counting = postgres(db.current.url, {
      max: 2,
      onnotice: () => {},
      debug: (_connection, statement) => {
        if (statement.includes("notify_enqueue_overdue")) scans += 1;
      },
    });
    closing(() => counting.end());
    const intervalMs = 200;
    const started = await drain({ sql: counting, intervalMs });
    const since = Date.now();
    // A wake-up every 10 ms, as committed enqueues bring under load: each asks for a claim.
    for (let i = 0; i < 100; i += 1) {
      started.wake();
      await sleep(10);
    }
    const elapsed = Date.now() - since;
    expect(scans).toBeGreaterThanOrEqual(1);
    expect(scans).toBeLessThanOrEqual(Math.floor(elapsed / intervalMs) + 2);
  });

  it("takes the next batch at once when a pass enqueued a full one", async () => {
    const sessions = await Promise.all(Array.from({ length: 501 }, () => runningSession()));
    await Promise.all(sessions.map((session) => session.move("waiting_input")));
    await sleep(OVERDUE_MS);
    // An hour between looks: only the full batch's follow-up can reach the 501st session.
    const started = await drain({ intervalMs: 3_600_000 });
    started.wake();
    await expect
      .poll(async () => (await Promise.all(sessions.map((session) => overdueOf(session.key)))).filter((events) => events.length === 1).length, {
        timeout: 10_000,
      })
      .toBe(501);
  });
});
