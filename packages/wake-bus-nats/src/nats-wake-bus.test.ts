import type { WakeBus } from "@openwork/desktop-target";
import type { PushHint, WakeBusHandlers, WakeNotice } from "@openwork/desktop-target/internal";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { eventually } from "@openwork/runner-protocol/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNatsWakeBus, subjectToken } from "./nats-wake-bus.js";
import { findNatsServer, type NatsServer, startNatsServer } from "./testing/nats-server.js";

/** Handlers that record what the bus delivered. */
function recording() {
  const seen = { sessions: [] as string[], wakes: [] as WakeNotice[], push: [] as PushHint[], resyncs: 0, unreadable: [] as string[] };
  const handlers: WakeBusHandlers = {
    sessions: (ids) => void seen.sessions.push(...ids),
    wakes: (notices) => void seen.wakes.push(...notices),
    push: (hints) => void seen.push.push(...hints),
    resync: () => void seen.resyncs++,
    unreadable: (where) => void seen.unreadable.push(where),
  };
  return { seen, handlers };
}

const until = (check: () => boolean, ms?: number) => eventually(() => (check() ? true : undefined), ms);

const notice = (o: string, t: string): WakeNotice => ({ w: 1, o, m: "mem_1", r: null, t });

describe.skipIf(!findNatsServer())("the NATS wake bus (Debian's nats-server)", () => {
  let server: NatsServer;
  let raw: NatsConnection;
  const buses: WakeBus[] = [];
  const bus = async () => {
    const opened = await connectNatsWakeBus({ servers: server.url, publishTimeoutMs: 500 });
    buses.push(opened);
    return opened;
  };
  beforeAll(async () => {
    server = await startNatsServer();
    raw = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  afterAll(async () => {
    for (const opened of buses) await opened.close();
    await raw.close();
    await server.stop();
  });

  it("publishes on one subject per organization and kind, with organization ids made safe for subjects", async () => {
    const subjects: string[] = [];
    const sub = raw.subscribe("openwork.wake.>", { callback: (_, msg) => void subjects.push(msg.subject) });
    await raw.flush();
    const publisher = await bus();
    await publisher.publish({
      sessions: [
        { o: "org.a*>", s: "rs_1" },
        { o: "org_b", s: "rs_2" },
        { o: "org_b", s: "rs_3" },
      ],
      wakes: [notice("org_b", "dt_1")],
    });
    await until(() => subjects.length === 3);
    expect(subjects.sort()).toEqual(["openwork.wake.session.org%2Ea%2A%3E", "openwork.wake.session.org_b", "openwork.wake.task.org_b"]);
    expect(subjectToken("org_Ünï-1")).toBe("org_%C3%9Cn%C3%AF-1");
    sub.unsubscribe();
  });

  it("carries hints from one process's bus to another's, and hands a malformed payload to `unreadable`", async () => {
    const { seen, handlers } = recording();
    const listener = await bus();
    await listener.subscribe(handlers);
    const publisher = await bus();
    await publisher.publish({
      sessions: [
        { o: "org_x", s: "rs_a" },
        { o: "org_y", s: "rs_b" },
      ],
      wakes: [notice("org_x", "dt_a"), notice("org_y", "dt_b")],
    });
    await until(() => seen.sessions.length === 2 && seen.wakes.length === 2);
    expect(seen.sessions.sort()).toEqual(["rs_a", "rs_b"]);
    expect(seen.wakes.map((n) => n.t).sort()).toEqual(["dt_a", "dt_b"]);

    raw.publish("openwork.wake.task.org_x", "{not json");
    raw.publish("openwork.wake.task.org_x", JSON.stringify([{ w: "one" }]));
    await until(() => seen.unreadable.length === 2);
    expect(seen.wakes).toHaveLength(2);
  });

  it("carries push hints on a subject per organization, with the organization read back from it", async () => {
    const { seen, handlers } = recording();
    const listener = await bus();
    await listener.subscribe(handlers);
    const push: PushHint[] = [
      { o: "org.a*>", m: "mcps_one", k: "events" },
      { o: "org_Ünï", m: "mcps_two", k: "subs" },
      { o: "org_Ünï", m: "mcps_three", k: "gone" },
    ];
    await (await bus()).publish({ sessions: [], wakes: [], push });
    await until(() => seen.push.length === 3);
    expect([...seen.push].sort((x, y) => x.m.localeCompare(y.m))).toEqual([...push].sort((x, y) => x.m.localeCompare(y.m)));

    raw.publish("openwork.wake.push.org_x", "mcps_x:exploded");
    raw.publish("openwork.wake.push.org_x", "not an entry");
    await until(() => seen.unreadable.length === 2);
    expect(seen.unreadable).toEqual(["openwork.wake.push.org_x", "openwork.wake.push.org_x"]);
    expect(seen.push).toHaveLength(3);
  });

  it("splits a large batch into messages under the server's max payload", async () => {
    const { seen, handlers } = recording();
    const listener = await bus();
    await listener.subscribe(handlers);
    const wakes = Array.from({ length: 2_500 }, (_, i) => notice("org_big", `dt_${"x".repeat(200)}_${i}`));
    await (await bus()).publish({ sessions: [], wakes });
    await until(() => seen.wakes.length === 2_500);
  });

  it("tells the hub to resync once the server is back, and carries hints again", async () => {
    const { seen, handlers } = recording();
    const listener = await bus();
    await listener.subscribe(handlers);
    const publisher = await bus();
    await server.kill();
    // A publish while the server is away is refused (the hub's publisher counts it as failed).
    await expect(publisher.publish({ sessions: [{ o: "org_r", s: "rs_lost" }], wakes: [] })).rejects.toThrow();
    await server.start();
    await until(() => seen.resyncs >= 1, 10_000);
    // Each bus reconnects on its own schedule; the publisher's refusals end once it is back too.
    let delivered = false;
    const deadline = Date.now() + 10_000;
    while (!delivered && Date.now() < deadline)
      delivered = await publisher.publish({ sessions: [{ o: "org_r", s: "rs_after" }], wakes: [] }).then(
        () => true,
        () => false,
      );
    await until(() => seen.sessions.includes("rs_after"));
  });
});

// No server needed: nothing listens on port 1.
it("names the servers it could not reach at start", async () => {
  await expect(connectNatsWakeBus({ servers: "nats://127.0.0.1:1", connection: { timeout: 500 } })).rejects.toThrow(
    /cannot reach NATS at nats:\/\/127\.0\.0\.1:1/,
  );
});
