import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transaction } from "../store/transaction.js";
import type { Hints } from "./hints.js";

import type { PushHint, WakeBus, WakeBusHandlers } from "./wake-bus.js";
import { createWakeHub, type WakeHub } from "./wake-hub.js";

const db = useTestDatabase();
let sql: postgres.Sql;
let hub: WakeHub;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 20, onnotice: () => {} });
  hub = createWakeHub({ sql });
  await hub.ready;
});
afterAll(async () => {
  await hub.close();
  await sql.end({ timeout: 5 });
});

/** The hub's database handle with its publisher: what `transaction()` takes. */
const store = () => ({ sql, publisher: hub.publisher });

const settles = (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe("hints after commit", () => {
  it("leaves once the transaction commits, and never for one that rolled back", async () => {
    const woken = hub.waitForSession("rs_hint_committed", 5_000);
    let release: () => void = () => {};
    const holding = new Promise<void>((resolve) => (release = resolve));
    const committing = transaction(store(), async (tx, hints) => {
      hints.session("org_hints", "rs_hint_committed");
      await tx`select 1`;
      await holding;
    });
    // Gathered, not sent: nobody hears of it while the transaction is open.
    expect(await settles(woken, 300)).toBe(false);
    release();
    await committing;
    expect(await settles(woken, 2_000)).toBe(true);

    const never = hub.waitForSession("rs_hint_rolled_back", 5_000);
    await expect(
      transaction(store(), async (tx, hints) => {
        hints.session("org_hints", "rs_hint_rolled_back");
        await tx`select 1`;
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await settles(never, 500)).toBe(false);
  });

  it("coalesces the hints of many commits into few notifying statements, and delivers every one", async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `rs_hint_many_${i}`);
    const woken = ids.map((id) => hub.waitForSession(id, 10_000));
    const before = hub.publisher.stats();
    await Promise.all(
      ids.map((id) =>
        transaction(store(), async (tx, hints) => {
          await tx`select 1`;
          hints.session("org_hints", id);
        }),
      ),
    );
    expect(await Promise.all(woken.map((w) => settles(w, 5_000)))).toEqual(ids.map(() => true));
    // The listener may hear a batch before its publishing statement has answered.
    const deadline = Date.now() + 2_000;
    while (hub.publisher.stats().published - before.published < 300 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const after = hub.publisher.stats();
    expect(after.published - before.published).toBe(300);
    expect(after.statements - before.statements).toBeLessThan(300 / 4);
  });

  it("refuses to gather outside transaction(): a NOTIFY must never ride inside one", async () => {
    // Hints kept past the transaction would leave for a change that committed long ago, or never.
    let leaked: Hints | undefined;
    await transaction(store(), async (tx, hints) => {
      leaked = hints;
      await tx`select 1`;
    });
    expect(() => leaked!.session("org_hints", "rs_hint_late")).toThrow(/transaction\(\)/);
  });

  it("proves its LISTEN connection at start: a hint sent through the pool that never arrives is a start-up error", async () => {
    // NOTIFY is per database: a listener on another database hears nothing, as behind a pooler in transaction mode.
    const elsewhere = new URL(db.current.url);
    elsewhere.pathname = "/postgres";
    const listen = postgres(elsewhere.toString(), { max: 1, onnotice: () => {} });
    const blind = createWakeHub({ sql, listen, probeTimeoutMs: 500 });
    await expect(blind.ready).rejects.toThrow(/did not receive a hint the gateway sent.*pooler/);
    await blind.close();
    await listen.end({ timeout: 5 });
    // Its own direct connection on the same database proves itself.
    const direct = postgres(db.current.url, { max: 1, onnotice: () => {} });
    const proven = createWakeHub({ sql, listen: direct, probeTimeoutMs: 2_000 });
    await expect(proven.ready).resolves.toBeUndefined();
    await proven.close();
    await direct.end({ timeout: 5 });
  });
});

/** A bus inside one process: what it publishes comes straight back (push hints only when `carriesPush`). */
function loopbackBus(carriesPush: boolean) {
  let handlers: WakeBusHandlers | undefined;
  const bus: WakeBus = {
    name: "loopback",
    publish: async (batch) => {
      handlers?.sessions(batch.sessions.map((hint) => hint.s));
      if (carriesPush && batch.push) handlers?.push?.(batch.push);
    },
    subscribe: async (given) => void (handlers = given),
    close: async () => {},
  };
  return { bus, resync: () => handlers?.resync() };
}

describe("push hints on the bus", () => {
  it("reach every push subscriber once published, after the other hints' commit path, and a resync reaches them too", async () => {
    const heard: PushHint[] = [];
    let resyncs = 0;
    // Every hub's start-up probe sends a push hint on the same database's channel: a probe of
    // another hub of this file may land while this subscriber listens (CI saw one); not ours to count.
    const stop = hub.subscribePush({ push: (hints) => void heard.push(...hints.filter((hint) => !hint.m.startsWith("probe_"))), resync: () => void resyncs++ });
    hub.publishPush([
      { o: "org_push", m: "mcps_push_one", k: "events" },
      { o: "org_push", m: "mcps_push_two", k: "gone" },
    ]);
    const deadline = Date.now() + 2_000;
    while (heard.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    // PostgreSQL's payload carries no organization: the MCP session id is what routes.
    expect(heard).toEqual([
      { o: "", m: "mcps_push_one", k: "events" },
      { o: "", m: "mcps_push_two", k: "gone" },
    ]);
    expect(hub.stats().pushSubscribers).toBe(1);
    stop();
    expect(hub.stats().pushSubscribers).toBe(0);

    const loop = loopbackBus(true);
    const looped = createWakeHub({ sql, bus: loop.bus, probeTimeoutMs: 500 });
    await looped.ready;
    looped.subscribePush({ push: () => {}, resync: () => void resyncs++ });
    loop.resync();
    expect(resyncs).toBe(1);
    await looped.close();
  });

  it("refuses to start on a bus that drops push hints: the start-up probe sends one", async () => {
    const deaf = createWakeHub({ sql, bus: loopbackBus(false).bus, probeTimeoutMs: 300 });
    await expect(deaf.ready).rejects.toThrow(/did not receive a push hint it sent through loopback.*does not carry push hints/);
    await deaf.close();
  });
});
