import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../migrate.js";
import { pruneLedger } from "./prune-ledger.js";
import { createSessionLedger } from "./session-ledger.js";

const db = useTestDatabase();
const owner = { organizationId: "org_prune", userId: "user_prune" };

beforeAll(() => migrate(db.current.sql));

/** Ages a row as if `interval` had passed since it last changed (and since its last activity). */
const age = (id: string, interval: string) =>
  db.current.sql`update remote_session set last_activity_at = now() - ${interval}::interval, updated_at = now() - ${interval}::interval where id = ${id}`;
const ids = async () => (await db.current.sql<{ id: string }[]>`select id from remote_session order by id`).map((row) => row.id);

describe("ledger retention", () => {
  it("deletes a session the ledger still shows in a turn once its row has not changed for the retention period", async () => {
    const ledger = createSessionLedger(db.current.sql);
    // A cloud session's state is refreshed only by reads: nobody read it for 31 days.
    const stale = await ledger.insert(owner, { target: "cloud", title: "never read again", state: "running" });
    await age(stale.id, "31 days");
    const waiting = await ledger.insert(owner, { target: "cloud", title: "asked and forgotten", state: "waiting_input" });
    await age(waiting.id, "31 days");
    // Quiet for 31 days but its row moved yesterday (a desktop's claim): its turn may still run.
    const moving = await ledger.insert(owner, { target: "desktop", title: "claimed", state: "running" });
    await db.current
      .sql`update remote_session set last_activity_at = now() - interval '31 days', updated_at = now() - interval '1 day' where id = ${moving.id}`;
    const recent = await ledger.insert(owner, { target: "cloud", title: "recent", state: "running" });
    await age(recent.id, "29 days");

    expect((await pruneLedger(db.current.sql)).sessions).toBe(2);
    expect(await ids()).toEqual([moving.id, recent.id].sort());
    await db.current.sql`delete from remote_session`;
  });

  it("deletes a pending idempotency key older than the retention (what a crashed process leaves), not a younger one", async () => {
    const key = (digit: string) => digit.repeat(64);
    await db.current.sql`
      insert into remote_session_idempotency (organization_id, user_id, operation, key_digest, args_digest, state, claimed_at, created_at)
      values ('org_prune', 'user_prune', 'create', ${key("a")}, ${key("b")}, 'pending', now() - interval '25 hours', now() - interval '25 hours'),
             ('org_prune', 'user_prune', 'create', ${key("c")}, ${key("b")}, 'pending', now() - interval '23 hours', now() - interval '23 hours'),
             -- Taken over a minute ago by a live retry: still honoured while that retry runs.
             ('org_prune', 'user_prune', 'create', ${key("d")}, ${key("b")}, 'pending', now() - interval '1 minute', now() - interval '25 hours')`;
    expect((await pruneLedger(db.current.sql)).idempotency).toBe(1);
    const left = await db.current.sql<{ key_digest: string }[]>`select key_digest from remote_session_idempotency order by key_digest`;
    expect(left.map((row) => row.key_digest)).toEqual([key("c"), key("d")]);
  });

  it("deletes a reservation its target never took after the bound, and nothing a target took or a stop ended", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const reserve = async (title: string) =>
      (await ledger.reserve(owner, { id: `rs_${title.padEnd(26, "0")}`, target: "cloud", title, state: "queued" }))!.session;
    const orphan = await reserve("orphan");
    const young = await reserve("young");
    const taken = await reserve("taken");
    await ledger.update(taken, { taken: true, targetSessionId: "ses_1" });
    const stopped = await reserve("stopped");
    await ledger.update(stopped, { state: "stopped", expect: "queued", expectReserved: true });
    await db.current.sql`update remote_session set reserved_at = now() - interval '11 minutes' where reserved_at is not null and id <> ${young.id}`;

    expect((await pruneLedger(db.current.sql)).reservations).toBe(1);
    expect(await ids()).toEqual([young.id, taken.id, stopped.id].sort());
    expect(await ledger.find(owner, orphan.id)).toBeNull();
  });
});
