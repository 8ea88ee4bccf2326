import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, type NatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startCountingRunners } from "./testing/counting-runners.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const member: DevMember = fixedDevMember("natsbus", ["mcp:write"]);
const POLL_MS = 4_000;

describe.skipIf(!findNatsServer())("two gateway processes on the NATS wake bus", () => {
  let nats: NatsServer;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await nats.stop();
  });
  const replica = async () => {
    const started = await startTestGateway(db.current.url, member, { wakeBus: await connectNatsWakeBus({ servers: nats.url, publishTimeoutMs: 500 }) });
    cleanups.push(started.close);
    return started;
  };

  it("wakes runners across processes through NATS, and loses no task when nats-server is killed mid-run", async () => {
    const a = await replica();
    const b = await replica();
    const runners = await startCountingRunners({
      baseUrl: a.gateway.baseUrl,
      member,
      idPrefix: "runner-nats",
      count: 2,
      pollIntervalMs: POLL_MS,
      workMs: 20,
      retryLimit: 4,
      backoffMaxMs: 400,
    });
    cleanups.push(runners.stop);
    // Both runners' wake streams are open on replica A before any work is created on B.
    await eventually(() => (a.gateway.hub.stats().runnerStreams >= 2 ? true : undefined));
    const create = async (phase: string, i: number) => {
      const created = await b.execute("remote-session:create", { target: "desktop", title: `${phase} ${i}`, prompt: `${phase} ${i}` });
      expect(created.isError, JSON.stringify(created.structuredContent)).toBeFalsy();
      return created.structuredContent.sessionId as string;
    };
    const createSome = async (phase: string) => {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        ids.push(await create(phase, i));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return ids;
    };
    const allRun = (ids: string[], ms: number) => eventually(() => (ids.every((id) => runners.runs.has(id)) ? true : undefined), ms);
    /** How long each session's task waited for a runner, in ms. */
    const waits = async (ids: string[]) =>
      (
        await a.sql<{ waited: number }[]>`
        select extract(epoch from (claimed_at - created_at)) * 1000 as waited from desktop_task
        where session_id = any(${ids}) and kind = 'remote_session.create'`
      ).map((row) => Number(row.waited));

    const before = await createSome("nats-up");
    await allRun(before, 10_000);
    // Faster than the runners' poll: only a hint through NATS from B to A's streams does that.
    expect(Math.max(...(await waits(before)))).toBeLessThan(POLL_MS / 2);

    const listensBefore = a.gateway.hub.stats().listens;
    await nats.kill();
    const during = await createSome("nats-down");
    // No hint can travel: the runners' backstop poll takes every task.
    await allRun(during, POLL_MS * 4);

    await nats.start();
    await eventually(() => (a.gateway.hub.stats().listens > listensBefore && b.gateway.hub.stats().listens > listensBefore ? true : undefined), 10_000);
    const after = await createSome("nats-back");
    await allRun(after, 10_000);
    expect(Math.max(...(await waits(after)))).toBeLessThan(POLL_MS / 2);

    // Every session ran exactly once, and its task is done.
    const all = [...before, ...during, ...after];
    expect(all.map((id) => runners.runs.get(id))).toEqual(all.map(() => 1));
    // A run is counted when it starts; its completion follows within moments.
    const states = async () => a.sql<{ state: string; n: number }[]>`
      select state, count(*)::int as n from desktop_task where session_id = any(${all}) group by state`;
    // Waits, then asserts, so a failure shows the states it found.
    await eventually(async () => ((await states()).every((row) => row.state === "done") ? true : undefined)).catch(() => {});
    expect(await states()).toEqual([{ state: "done", n: all.length }]);
  }, 90_000);
});
