import { createSessionLedger, type LedgerSession } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesktopChannel, type DesktopChannel } from "./desktop-channel.js";
import { DEFAULT_DESKTOP_TIMINGS } from "./desktop-timings.js";
import { transaction } from "./store/transaction.js";
import { type RunnerGateway, SECRET, startRunnerGateway } from "./testing/runner-gateway.js";
import { openworkMintRequest } from "./testing/openwork-desktop-bridge.js";
import type { HintBatch, WakeBus, WakeBusHandlers } from "./wake/wake-bus.js";

const db = useTestDatabase();

/** A bus inside one process that records every batch it is given, and carries it back. */
function recordingBus(name: string) {
  const batches: HintBatch[] = [];
  let handlers: WakeBusHandlers | undefined;
  const bus: WakeBus = {
    name,
    publish: async (batch) => {
      batches.push(batch);
      handlers?.sessions(batch.sessions.map((hint) => hint.s));
      if (batch.push) handlers?.push?.(batch.push);
    },
    subscribe: async (given) => void (handlers = given),
    close: async () => {},
  };
  const sessions = () => batches.flatMap((batch) => batch.sessions.map((hint) => hint.s));
  return { bus, sessions };
}

const routes = { secret: SECRET, baseUrl: "http://gateway.test", authenticateMember: async () => null, isActiveMember: async () => true };

describe("two desktop channels in one process", () => {
  const handles: postgres.Sql[] = [];
  const channels: DesktopChannel[] = [];
  const open = (bus: WakeBus, sql = postgres(db.current.url, { max: 4, onnotice: () => {} })) => {
    if (!handles.includes(sql)) handles.push(sql);
    const channel = createDesktopChannel({ sql, bus, routes, sweeper: false, probeTimeoutMs: 2_000 });
    channels.push(channel);
    return channel;
  };
  afterAll(async () => {
    for (const channel of channels) await channel.close();
    for (const sql of handles) await sql.end({ timeout: 5 });
  });
  /** Commits a transaction on `channel` that hints `sessionId`, and waits until its own hub heard it. */
  const hint = async (channel: DesktopChannel, sessionId: string) => {
    const heard = channel.hub.waitForSession(sessionId, 5_000);
    await transaction(channel.store, async (tx, hints) => {
      await tx`select 1`;
      hints.session("org_channels", sessionId);
    });
    await heard;
  };

  it("on two database handles, each sends its transactions' hints through its own bus only", async () => {
    const a = recordingBus("bus a");
    const b = recordingBus("bus b");
    const first = open(a.bus);
    const second = open(b.bus);
    await Promise.all([first.start(), second.start()]);
    expect(first.publisher).not.toBe(second.publisher);
    await hint(first, "rs_channel_a");
    await hint(second, "rs_channel_b");
    second.hub.announceSession("org_channels", "rs_channel_b_announced");
    await second.hub.waitForSession("rs_channel_b_announced", 5_000);
    expect(a.sessions().filter((s) => s.startsWith("rs_channel"))).toEqual(["rs_channel_a"]);
    expect(b.sessions().filter((s) => s.startsWith("rs_channel"))).toEqual(["rs_channel_b", "rs_channel_b_announced"]);
  });

  it("on one database handle, a second channel does not take over the first one's hints", async () => {
    // Once, every transaction of a client published through the bus of the last hub built on it.
    const sql = postgres(db.current.url, { max: 4, onnotice: () => {} });
    const a = recordingBus("bus c");
    const b = recordingBus("bus d");
    const first = open(a.bus, sql);
    const second = open(b.bus, sql);
    await Promise.all([first.start(), second.start()]);
    await hint(first, "rs_shared_a");
    await hint(second, "rs_shared_b");
    expect(a.sessions().filter((s) => s.startsWith("rs_shared"))).toEqual(["rs_shared_a"]);
    expect(b.sessions().filter((s) => s.startsWith("rs_shared"))).toEqual(["rs_shared_b"]);
  });
});

describe("the channel's timings", () => {
  const member = { organizationId: "org_channel_timings", memberId: "mem_channel_timings" };
  const window = 60_000;
  let gateway: RunnerGateway;
  let sweeps = 0;
  beforeAll(async () => {
    gateway = await startRunnerGateway(db.current.url, {
      dialects: ["desktop-runner", "openwork"],
      timings: { presenceWindowMs: window, sweepIntervalMs: 20 },
      sweeper: { onSweep: () => void sweeps++ },
    });
  });
  afterAll(() => gateway.close());

  const memberGet = async (path: string) =>
    (await fetch(`${gateway.baseUrl}${path}`, { headers: { authorization: `Bearer ${gateway.memberToken(member)}` } })).json() as Promise<
      Record<string, unknown>
    >;
  const post = (path: string, token: string, body: unknown) =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  /** Where the three pieces stand on the desktop: the target's availability, our presence route, OpenWork's, and the sweeper's verdict on its turn. */
  const verdicts = async (sessionId: string) => {
    const before = sweeps;
    while (sweeps < before + 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const session = (await createSessionLedger(gateway.sql).find(gateway.call(member), sessionId)) as LedgerSession;
    return {
      target: (await gateway.target.availability(gateway.call(member))).available,
      routes: (await memberGet("/v1/desktop-runner/presence")).connected,
      openwork: (await memberGet("/v1/automation-runners/presence")).connected,
      sweeper: session.state,
    };
  };

  it("one presence window reaches the target, the runner routes (both dialects) and the sweeper", async () => {
    expect(gateway.channel.timings).toEqual({
      ...DEFAULT_DESKTOP_TIMINGS,
      leaseMs: 3_000,
      heartbeatIntervalMs: 200,
      keepaliveMs: 1_000,
      membershipCheckMs: 200,
      presenceWindowMs: window,
      presenceFlushMs: window / 4,
      sweepIntervalMs: 20,
    });
    // An OpenWork desktop (no lease: presence alone says whether its turn still runs) with a turn delivered and running.
    const minted = await post("/v1/automation-runners/token", gateway.memberToken(member), openworkMintRequest("timings-install-01"));
    const { token } = (await minted.json()) as { token: string };
    const created = await gateway.sessions.create(gateway.call(member), { title: "timings", prompt: "p" });
    const work = (await (await fetch(`${gateway.baseUrl}/v1/automation-runner/work`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      items: { commandId: string }[];
    };
    const commandId = work.items[0]!.commandId;
    await post(`/v1/remote-session-commands/${commandId}/claim`, token, {});
    await post(`/v1/remote-session-commands/${commandId}/complete`, token, { status: "delivered", sessionId: "ses_timings", workspaceId: "ws_t" });
    await post(`/v1/remote-session-commands/${commandId}/session`, token, { status: "running", observedAt: 1_000 });

    // Seen within the window: online everywhere, the turn runs on.
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '30 seconds' where runner_id = 'timings-install-01'`;
    expect(await verdicts(created.sessionId)).toEqual({ target: true, routes: true, openwork: true, sweeper: "running" });
    // Past the window (well within the default 10 minutes): offline everywhere, the turn is lost.
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '2 minutes' where runner_id = 'timings-install-01'`;
    expect(await verdicts(created.sessionId)).toEqual({ target: false, routes: false, openwork: false, sweeper: "interrupted" });
    const lost = (await createSessionLedger(gateway.sql).find(gateway.call(member), created.sessionId)) as LedgerSession;
    expect(lost.lastError).toEqual({ error: "desktop_lost", message: "the desktop has not been seen for 1 minute; the turn may still finish when it is back" });
  });

  it("refuses a timing that is not a positive number of milliseconds", () => {
    expect(() => createDesktopChannel({ sql: gateway.sql, routes, timings: { presenceWindowMs: 0 } })).toThrow(/presenceWindowMs must be a positive number/);
  });
});
