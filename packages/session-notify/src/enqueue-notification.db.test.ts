import { replannedFunctions } from "@openwork/test-postgres";
import { describe, expect, it } from "vitest";
import { enqueueNotification } from "./enqueue-notification.js";
import { InvalidNotification, type NotificationEvent } from "./notification-event.js";
import { createNotifyChannels } from "./notify-channels.js";
import { useNotifyDatabase } from "./testing/notify-database.js";

// The outbox on a real PostgreSQL: what one enqueue writes, in the caller's transaction.
const db = useNotifyDatabase();
const ORG = "org_enqueue";

const event = (id: string, memberId: string, extra: Partial<NotificationEvent> = {}): NotificationEvent => ({
  id,
  kind: "waiting_input",
  organizationId: ORG,
  memberId,
  sessionId: "rs_enqueue",
  title: "Fix the build",
  state: "waiting_input",
  text: { question: "Delete the cache folder?" },
  occurredAt: new Date("2026-12-01T10:00:00Z"),
  ...extra,
});

describe("enqueueNotification", () => {
  // It runs inside the transaction of every session move a member's channel takes.
  it("calls no function PostgreSQL before 18 plans again at every call", async () => {
    expect(await replannedFunctions(db.current.sql, "notify_")).toEqual([]);
  });

  it("writes one delivery per enabled channel of the member that takes the kind, once per event id", async () => {
    const { sql } = db.current;
    const channels = createNotifyChannels(sql);
    const member = "member_fanout";
    await channels.create(ORG, { memberId: member, kind: "email", target: "a@example.com", eventKinds: ["waiting_input"] });
    await channels.create(ORG, { memberId: member, kind: "webhook", target: "https://example.com/hook", eventKinds: ["waiting_input", "turn_idle"] });
    await channels.create(ORG, { memberId: member, kind: "email", target: "off@example.com", eventKinds: ["waiting_input"], enabled: false });
    await channels.create(ORG, { memberId: member, kind: "email", target: "idle@example.com", eventKinds: ["turn_idle"] });
    await channels.create(ORG, { memberId: "someone_else", kind: "email", target: "b@example.com", eventKinds: ["waiting_input"] });

    expect(await enqueueNotification(sql, event("evt_fanout_1", member))).toEqual({ deliveries: 2, duplicate: false });
    expect(await enqueueNotification(sql, event("evt_fanout_1", member))).toEqual({ deliveries: 0, duplicate: true });
    const rows = await sql`select count(*)::int as n from notify_delivery where organization_id = ${ORG} and event_id = 'evt_fanout_1'`;
    expect(rows[0]?.n).toBe(2);
  });

  it("writes nothing when the caller's transaction rolls back", async () => {
    const { sql } = db.current;
    const member = "member_rollback";
    await createNotifyChannels(sql).create(ORG, { memberId: member, kind: "email", target: "r@example.com", eventKinds: ["waiting_input"] });
    await expect(
      sql.begin(async (tx) => {
        expect(await enqueueNotification(tx, event("evt_rollback", member))).toEqual({ deliveries: 1, duplicate: false });
        throw new Error("the state change failed");
      }),
    ).rejects.toThrow("the state change failed");
    const rows = await sql`select (select count(*) from notify_event where organization_id = ${ORG} and id = 'evt_rollback')::int as events,
      (select count(*) from notify_delivery where organization_id = ${ORG} and event_id = 'evt_rollback')::int as deliveries`;
    expect(rows[0]).toEqual({ events: 0, deliveries: 0 });
  });

  it("keeps the event's text only when one of its channels allows text", async () => {
    const { sql } = db.current;
    const channels = createNotifyChannels(sql);
    await channels.create(ORG, { memberId: "member_private", kind: "email", target: "p@example.com", eventKinds: ["waiting_input"] });
    await channels.create(ORG, { memberId: "member_open", kind: "email", target: "o@example.com", eventKinds: ["waiting_input"], allowText: true });
    await enqueueNotification(sql, event("evt_private", "member_private"));
    await enqueueNotification(sql, event("evt_open", "member_open"));
    const rows = await sql`select id, text from notify_event where organization_id = ${ORG} and id in ('evt_private', 'evt_open') order by id`;
    expect(rows.map((row) => [row.id, row.text])).toEqual([
      ["evt_open", { question: "Delete the cache folder?" }],
      ["evt_private", null],
    ]);
  });

  it("refuses a bad event or channel with a typed error, writing nothing", async () => {
    const { sql } = db.current;
    await expect(enqueueNotification(sql, { ...event("evt_bad", "m"), kind: "deleted" as never })).rejects.toBeInstanceOf(InvalidNotification);
    await expect(
      createNotifyChannels(sql).create(ORG, { memberId: "m", kind: "webhook", target: "ftp://example.com", eventKinds: ["turn_idle"] }),
    ).rejects.toBeInstanceOf(InvalidNotification);
    const rows = await sql`select count(*)::int as n from notify_event where organization_id = ${ORG} and id = 'evt_bad'`;
    expect(rows[0]?.n).toBe(0);
  });
});
