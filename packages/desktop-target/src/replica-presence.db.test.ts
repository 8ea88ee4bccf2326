import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { newId } from "@openwork/remote-session-core";
import { afterEach, describe, expect, it } from "vitest";
import { presenceOf } from "./presence.js";
import { listRunners } from "./store/list-runners.js";
import { flushReplica } from "./store/replica-presence.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
const member = { organizationId: "org_replica_presence", memberId: "mem_replica_presence" };
const window = 1_500;
const flushMs = 250;
const open: RunnerGateway[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

async function replica(options: { onStatement?: (statement: string) => void; audiences?: string[] } = {}): Promise<RunnerGateway> {
  const gateway = await startRunnerGateway(db.current.url, { timings: { presenceWindowMs: window, presenceFlushMs: flushMs }, ...options });
  open.push(gateway);
  return gateway;
}

/** Opens a runner's wake stream on `gateway` and reads its opening; abort the controller to close it. */
async function openStream(gateway: RunnerGateway, token: string) {
  const stream = new AbortController();
  const response = await fetch(`${gateway.baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: stream.signal });
  const reader = response.body!.getReader();
  await reader.read();
  const ended = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // aborted by the test
    }
  })();
  return { stream, ended };
}

const online = async (gateway: RunnerGateway, runnerId: string) =>
  presenceOf(await listRunners(gateway.sql, member), window).find((r) => r.runnerId === runnerId)?.online;

const holder = async (gateway: RunnerGateway, runnerId: string) =>
  (
    await gateway.sql<{ stream_replica: string | null; last_seen_at: Date }[]>`
    select stream_replica, last_seen_at from desktop_runner where organization_id = ${member.organizationId} and runner_id = ${runnerId}`
  )[0]!;

describe("presence kept by the replica holding the stream", () => {
  it("keeps idle streaming desktops online past the presence window with one statement a flush for all of them, none of their own", async () => {
    const statements: string[] = [];
    const gateway = await replica({ onStatement: (statement) => statements.push(statement) });
    const runners = ["idle-runner-0001", "idle-runner-0002", "idle-runner-0003"];
    const streams = [];
    for (const runnerId of runners) streams.push(await openStream(gateway, await gateway.registerRunner(member, runnerId)));
    await eventually(async () => ((await holder(gateway, runners[2]!)).stream_replica ? true : undefined));
    const seenAtOpen = await Promise.all(runners.map(async (r) => (await holder(gateway, r)).last_seen_at.getTime()));

    statements.length = 0;
    // Twice the window: a desktop seen only at its open would be offline by now.
    await new Promise((resolve) => setTimeout(resolve, 2 * window));
    const idle = [...statements];
    for (const runnerId of runners) expect(await online(gateway, runnerId)).toBe(true);
    // Every statement of the idle stretch is a flush (one per interval, whatever the number of desktops).
    expect(idle.length).toBeGreaterThanOrEqual(Math.floor((2 * window) / flushMs) - 2);
    expect(idle.length).toBeLessThanOrEqual(Math.ceil((2 * window) / flushMs) + 1);
    expect(idle.every((statement) => statement.includes("one replica's presence"))).toBe(true);
    // No desktop's own row was written: the keepalives (every second here) cost no statement.
    expect(await Promise.all(runners.map(async (r) => (await holder(gateway, r)).last_seen_at.getTime()))).toEqual(seenAtOpen);
    for (const { stream } of streams) stream.abort();
  });

  it("a replica that stopped flushing (it died) leaves its desktops online one presence window past its last flush, then offline", async () => {
    const gateway = await replica();
    await gateway.registerRunner(member, "dead-replica-0001");
    const dead = newId("rpl");
    // The dead replica's last flush noted the desktop, a window ago less a little.
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '1 hour' where runner_id = 'dead-replica-0001'`;
    await flushReplica(gateway.sql, dead, [{ ...member, runnerId: "dead-replica-0001" }]);
    await gateway.sql`update desktop_replica set seen_at = now() - make_interval(secs => ${(window - 500) / 1000}) where id = ${dead}`;
    expect(await online(gateway, "dead-replica-0001")).toBe(true);
    await expect.poll(() => online(gateway, "dead-replica-0001"), { timeout: 2_000, interval: 100 }).toBe(false);
  });

  it("ends a revoked runner's stream at the next flush when the revoke hint is lost, and keeps a stream whose token was minted after", async () => {
    const gateway = await replica();
    const revokedToken = await gateway.registerRunner(member, "revoked-runner-01");
    const kept = await openStream(gateway, await gateway.registerRunner(member, "kept-runner-0001"));
    const revoked = await openStream(gateway, revokedToken);
    await eventually(async () => ((await holder(gateway, "revoked-runner-01")).stream_replica ? true : undefined));
    // Revoked in the database alone: no hint on the bus.
    const started = Date.now();
    await gateway.sql`update desktop_runner set revoked_at = now(), tokens_not_before = now() where runner_id = 'revoked-runner-01'`;
    await revoked.ended;
    expect(Date.now() - started).toBeLessThan(flushMs + 1_000);
    // A token minted after the revocation (re-enabled, then signed in again) streams on.
    await gateway.sql`update desktop_runner set revoked_at = null where runner_id = 'revoked-runner-01'`;
    await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await openStream(gateway, await gateway.registerRunner(member, "revoked-runner-01"));
    let endedAgain = false;
    void again.ended.then(() => (endedAgain = true));
    await new Promise((resolve) => setTimeout(resolve, 3 * flushMs));
    expect(endedAgain).toBe(false);
    expect(await online(gateway, "kept-runner-0001")).toBe(true);
    again.stream.abort();
    kept.stream.abort();
  });

  it("a stream closing on one replica leaves its desktop online while another replica holds its newer stream", async () => {
    const a = await replica();
    // B takes the tokens A minted, as replicas behind one public URL do.
    const b = await replica({ audiences: [a.baseUrl] });
    const token = await a.registerRunner(member, "moving-runner-001");
    const onA = await openStream(a, token);
    const heldByA = await eventually(async () => (await holder(a, "moving-runner-001")).stream_replica ?? undefined);
    // The desktop reconnects to B (a load balancer moved it) before A noticed its old stream end.
    const onB = await openStream(b, token);
    const held = await eventually(async () => {
      const { stream_replica } = await holder(b, "moving-runner-001");
      return stream_replica !== heldByA ? stream_replica : undefined;
    });
    onA.stream.abort();
    await onA.ended;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await online(b, "moving-runner-001")).toBe(true);
    expect((await holder(b, "moving-runner-001")).stream_replica).toBe(held);
    onB.stream.abort();
    await expect.poll(() => online(b, "moving-runner-001"), { timeout: 3_000 }).toBe(false);
  });
});
