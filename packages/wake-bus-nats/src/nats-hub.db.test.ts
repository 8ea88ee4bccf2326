import { createWakeHub, transaction } from "@openwork/desktop-target";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNatsWakeBus } from "./nats-wake-bus.js";
import { findNatsServer, type NatsServer, startNatsServer } from "./testing/nats-server.js";

const db = useTestDatabase();

describe.skipIf(!findNatsServer())("wake hubs on the NATS bus", () => {
  let server: NatsServer;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await server.stop();
  });
  /** One gateway process: its own pool and its own bus. */
  const replica = async () => {
    const sql = postgres(db.current.url, { max: 4, onnotice: () => {} });
    const bus = await connectNatsWakeBus({ servers: server.url });
    const hub = createWakeHub({ sql, bus, probeTimeoutMs: 2_000 });
    closers.push(
      () => sql.end({ timeout: 5 }),
      () => hub.close(),
    );
    await hub.ready;
    return { sql, hub };
  };

  it("sends a committed transaction's hints to the other replica through NATS, and none through PostgreSQL", async () => {
    const a = await replica();
    const b = await replica();
    const notified: string[] = [];
    const listening = await a.sql.listen("openwork_desktop_session", (payload) => void notified.push(payload));
    closers.push(() => listening.unlisten());

    const woken = b.hub.waitForSession("rs_nats_hub", 5_000).then(() => Date.now());
    const sent = Date.now();
    await transaction({ sql: a.sql, publisher: a.hub.publisher }, async (tx, hints) => {
      await tx`select 1`;
      hints.session("org_nats", "rs_nats_hub");
    });
    expect((await woken) - sent).toBeLessThan(1_000);
    const announced = b.hub.waitForSession("rs_nats_announced", 5_000).then(() => Date.now());
    const announcedAt = Date.now();
    a.hub.announceSession("org_nats", "rs_nats_announced");
    expect((await announced) - announcedAt).toBeLessThan(1_000);
    // The probe and both hints went through NATS; PostgreSQL carried no notification.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(notified).toEqual([]);
  });

  it("carries a committed revocation's hint to the other replica: its registration cache forgets the runner at once", async () => {
    const a = await replica();
    const b = await replica();
    const revoked = new Promise<{ hints: unknown; at: number }>((resolve) => {
      const unsubscribe = b.hub.subscribeRevokes({
        revoked: (hints) => {
          unsubscribe();
          resolve({ hints, at: Date.now() });
        },
        resync: () => {},
      });
    });
    const sent = Date.now();
    await transaction({ sql: a.sql, publisher: a.hub.publisher }, async (tx, hints) => {
      await tx`select 1`;
      hints.revoke({ o: "org.nats*", m: "mem_nats", r: "runner-nats-0001" });
    });
    const heard = await Promise.race([revoked, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3_000))]);
    expect(heard).not.toBeNull();
    expect(heard!.hints).toEqual([{ o: "org.nats*", m: "mem_nats", r: "runner-nats-0001" }]);
    expect(heard!.at - sent).toBeLessThan(1_000);
  });
});
