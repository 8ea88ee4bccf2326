import { randomUUID } from "node:crypto";
import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import type { SessionPatch } from "@openwork/remote-session-core/internal";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { NOTIFICATION_KINDS } from "./notification-event.js";
import { createNotifyChannels } from "./notify-channels.js";
import { migrateSessionNotify } from "./notify-migrations.js";
import { useNotifyDatabase } from "./testing/notify-database.js";

// The trigger on the ledger's remote_session: every state change enqueues its event in the
// writer's own transaction, on a real PostgreSQL, through the core's real ledger.
const db = useNotifyDatabase();

/** A member with two channels taking every kind, and one session of theirs in `queued`. */
async function sessionOfSubscribedMember(sql = db.current.sql) {
  const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_notified" };
  const channels = createNotifyChannels(sql);
  for (const target of ["a@example.com", "b@example.com"]) {
    await channels.create(scope.organizationId, { memberId: scope.userId, kind: "email", target, eventKinds: [...NOTIFICATION_KINDS] });
  }
  const session = await createSessionLedger(sql).insert(scope, { target: "desktop", title: "Sort the invoices", state: "queued" });
  return { scope, session, key: { organizationId: scope.organizationId, id: session.id } };
}

const eventsOf = (organizationId: string, sql = db.current.sql) =>
  sql<{ kind: string; state: string; memberId: string; title: string; deliveries: number }[]>`
    select e.kind, e.state, e.member_id as "memberId", e.title, (select count(*)::int from notify_delivery d where d.organization_id = e.organization_id and d.event_id = e.id) as deliveries
    from notify_event e where e.organization_id = ${organizationId} order by e.created_at, e.occurred_at`;

describe("state changes enqueue their events", () => {
  it("a session moved through the ledger gets exactly the expected events, each to every channel", async () => {
    const { scope, key, session } = await sessionOfSubscribedMember();
    const ledger = createSessionLedger(db.current.sql);
    const moves: SessionPatch[] = [
      { state: "running" },
      { state: "waiting_input" },
      { state: "running" },
      { state: "idle" },
      { state: "running" },
      { state: "stopped" },
      { state: "running" },
      { state: "failed", lastError: { error: "model_error", message: "the model refused" } },
      { state: "queued" },
      // A follow-up no desktop took in time (the desktop sweeper's code).
      { state: "interrupted", lastError: { error: "runner_unavailable", message: "no desktop took it" } },
      { state: "running" },
      // The desktop's lease lapsed mid-turn (the sweeper's code).
      { state: "interrupted", lastError: { error: "lease_lost", message: "no heartbeats" } },
      // The desktop came back and reported the turn done.
      { state: "idle" },
      { state: "queued" },
      { state: "failed", lastError: { error: "delivery_deadline_passed", message: "deliverBy passed" } },
    ];
    for (const patch of moves) expect(await ledger.update(key, patch), JSON.stringify(patch)).not.toBeNull();
    expect((await eventsOf(scope.organizationId)).map((e) => [e.kind, e.state])).toEqual([
      ["waiting_input", "waiting_input"],
      ["turn_idle", "idle"],
      ["turn_stopped", "stopped"],
      ["turn_failed", "failed"],
      ["task_expired", "interrupted"],
      ["desktop_lost", "interrupted"],
      ["turn_idle", "idle"],
      ["task_expired", "failed"],
    ]);
    const [first] = await eventsOf(scope.organizationId);
    expect(first).toMatchObject({ memberId: scope.userId, title: session.title, deliveries: 2 });
  });

  it("a create no desktop claimed in time (expired) is task_expired; a presence-lost desktop (desktop_lost) is desktop_lost", async () => {
    const expired = await sessionOfSubscribedMember();
    await createSessionLedger(db.current.sql).update(expired.key, { state: "expired", lastError: { error: "runner_unavailable", message: "m" } });
    expect((await eventsOf(expired.scope.organizationId)).map((e) => e.kind)).toEqual(["task_expired"]);
    const lost = await sessionOfSubscribedMember();
    await createSessionLedger(db.current.sql).update(lost.key, { state: "running" });
    await createSessionLedger(db.current.sql).update(lost.key, { state: "interrupted", lastError: { error: "desktop_lost", message: "m" } });
    expect((await eventsOf(lost.scope.organizationId)).map((e) => e.kind)).toEqual(["desktop_lost"]);
  });

  it("a writer that bypasses the ledger (a target's own update in its transaction) is covered too", async () => {
    const { scope, session } = await sessionOfSubscribedMember();
    await db.current.sql.begin(async (tx) => {
      await tx`update remote_session set state = 'running' where organization_id = ${scope.organizationId} and id = ${session.id}`;
      await tx`update remote_session set state = 'waiting_input' where organization_id = ${scope.organizationId} and id = ${session.id}`;
    });
    expect((await eventsOf(scope.organizationId)).map((e) => e.kind)).toEqual(["waiting_input"]);
  });

  it("a rolled-back transaction enqueues nothing", async () => {
    const { scope, key } = await sessionOfSubscribedMember();
    await expect(
      db.current.sql.begin(async (tx) => {
        await createSessionLedger(tx).update(key, { state: "running" });
        await createSessionLedger(tx).update(key, { state: "waiting_input" });
        // Written in the writer's transaction: visible in it, and gone with it.
        expect((await eventsOf(scope.organizationId, tx as never)).map((e) => e.kind)).toEqual(["waiting_input"]);
        throw new Error("the move failed after the update");
      }),
    ).rejects.toThrow("the move failed after the update");
    expect(await eventsOf(scope.organizationId)).toEqual([]);
    expect(await db.current.sql`select 1 from notify_waiting where organization_id = ${scope.organizationId}`).toHaveLength(0);
  });

  it("an update that does not change the state enqueues nothing", async () => {
    const { scope, key } = await sessionOfSubscribedMember();
    const ledger = createSessionLedger(db.current.sql);
    await ledger.update(key, { state: "waiting_input" });
    const entered = await db.current.sql`select entered_at from notify_waiting where organization_id = ${scope.organizationId}`;
    await ledger.update(key, { state: "waiting_input", activity: true });
    await ledger.update(key, { targetRef: { runnerId: "run_1" }, lastError: { error: "model_error", message: "m" } });
    await db.current.sql`update remote_session set state = state where organization_id = ${scope.organizationId}`;
    expect((await eventsOf(scope.organizationId)).map((e) => e.kind)).toEqual(["waiting_input"]);
    expect(await db.current.sql`select entered_at from notify_waiting where organization_id = ${scope.organizationId}`).toEqual(entered);
  });

  it("a member without a channel taking the kind gets nothing kept", async () => {
    const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_quiet" };
    await createNotifyChannels(db.current.sql).create(scope.organizationId, {
      memberId: scope.userId,
      kind: "email",
      target: "q@example.com",
      eventKinds: ["turn_failed"],
    });
    const session = await createSessionLedger(db.current.sql).insert(scope, { target: "desktop", title: "Quiet", state: "running" });
    await createSessionLedger(db.current.sql).update({ organizationId: scope.organizationId, id: session.id }, { state: "idle" });
    expect(await eventsOf(scope.organizationId)).toEqual([]);
  });

  it("a move nobody is told of calls nothing: into running or queued, or for a member with no channel taking its kind", async () => {
    const subscribed = await sessionOfSubscribedMember();
    const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_unsubscribed" };
    const unsubscribed = await createSessionLedger(db.current.sql).insert(scope, { target: "desktop", title: "Unheard", state: "running" });
    const counted = await db.current.sql.begin(async (tx) => {
      // This transaction's own function calls, as PostgreSQL counts them (track_functions: a
      // superuser's, or a role granted `set on parameter track_functions`, as CI's is).
      await tx`set local track_functions = 'all'`.catch((error: Error) => {
        throw new Error(`this test counts function calls: the role needs "grant set on parameter track_functions" (${error.message})`);
      });
      const calls = async () => {
        const [row] = await tx<{ trigger: number; enqueue: number }[]>`
          select coalesce(pg_stat_get_xact_function_calls('notify_session_state_change'::regproc), 0)::int as trigger,
            coalesce(pg_stat_get_xact_function_calls('notify_enqueue'::regproc), 0)::int as enqueue`;
        return [row!.trigger, row!.enqueue];
      };
      const ledger = createSessionLedger(tx);
      const moveCounted = async (key: { organizationId: string; id: string }, state: SessionPatch["state"]) => {
        expect(await ledger.update(key, { state }), state).not.toBeNull();
        return calls();
      };
      return [
        await moveCounted(subscribed.key, "running"),
        await moveCounted(subscribed.key, "waiting_input"),
        await moveCounted(subscribed.key, "running"),
        await moveCounted(subscribed.key, "idle"),
        await moveCounted(subscribed.key, "queued"),
        await moveCounted(subscribed.key, "running"),
        await moveCounted(subscribed.key, "waiting_input"),
        await moveCounted(subscribed.key, "queued"),
        await moveCounted({ organizationId: scope.organizationId, id: unsubscribed.id }, "idle"),
      ];
    });
    // [trigger calls, enqueue calls] after each move: entering running or queued fires the
    // trigger only to leave waiting_input; the unsubscribed member's idle fires it but enqueues nothing.
    expect(counted).toEqual([
      [0, 0],
      [1, 1],
      [2, 1],
      [3, 2],
      [3, 2],
      [3, 2],
      [4, 3],
      [5, 3],
      [6, 3],
    ]);
    // One transaction: its second waiting_input has the first one's event id (told once).
    expect((await eventsOf(subscribed.scope.organizationId)).map((e) => e.kind)).toEqual(["waiting_input", "turn_idle"]);
    expect(await db.current.sql`select 1 from notify_waiting where organization_id = ${subscribed.scope.organizationId}`).toHaveLength(0);
    expect(await eventsOf(scope.organizationId)).toEqual([]);
  });

  it("works with the ledger and the notify tables in one named schema, and refuses to migrate before the ledger", async () => {
    const gateway = postgres(db.current.url, { max: 2, onnotice: () => {}, connection: { search_path: "gateway_schema" } });
    try {
      await expect(migrateSessionNotify(gateway, { schema: "gateway_schema" })).rejects.toThrow(
        /remote_session is not in schema "gateway_schema"; migrate it first, into the same schema/,
      );
      expect(await db.current.sql`select 1 from pg_namespace where nspname = 'gateway_schema'`).toHaveLength(0);
      await migrate(gateway, { schema: "gateway_schema" });
      await migrateSessionNotify(gateway, { schema: "gateway_schema" });
      const { scope, key } = await sessionOfSubscribedMember(gateway);
      await createSessionLedger(gateway).update(key, { state: "waiting_input" });
      expect((await eventsOf(scope.organizationId, gateway)).map((e) => e.kind)).toEqual(["waiting_input"]);
    } finally {
      await gateway.end();
    }
  });
});
