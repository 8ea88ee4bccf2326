import type { MemberScope } from "@openwork/remote-session-core";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import type { Sql } from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";
import { postgresWakeBus, type WakeBus } from "../wake/wake-bus.js";

const db = useTestDatabase();
const open: RunnerGateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

// touchRunner's select: the registration's round trip.
const REGISTRATION_READ = /\bas revoked\b/;
const HINT_PUBLISH = /pg_notify/;
const PREFIX = "/v1/desktop-runner";

/** A replica whose statements are counted (its requests' own: no hint publishes), and the registration reads among them. */
async function countedReplica(options: Parameters<typeof startRunnerGateway>[1] = {}) {
  const counts = { statements: 0, registrationReads: 0 };
  const gateway = await startRunnerGateway(db.current.url, {
    ...options,
    onStatement: (statement) => {
      // Hints leave coalesced, after their commit, on a later turn: not a request's own statement.
      if (!HINT_PUBLISH.test(statement)) counts.statements++;
      if (REGISTRATION_READ.test(statement)) counts.registrationReads++;
    },
  });
  open.push(gateway);
  return { gateway, counts };
}

/** The default bus, except that revoke hints never leave: what a lost hint looks like to every process. */
const droppingRevokes = (sql: Sql): WakeBus => {
  const bus = postgresWakeBus({ sql });
  return { ...bus, publish: ({ revokes: _dropped, ...batch }) => bus.publish(batch) };
};

/** `GET work` with the runner's token, no retries: the status says whether the request was served. */
const work = async (gateway: RunnerGateway, token: string) =>
  (await fetch(`${gateway.serverUrl}${PREFIX}/work`, { headers: { authorization: `Bearer ${token}` } })).status;

async function revoke(gateway: RunnerGateway, member: MemberScope, runnerId: string): Promise<void> {
  const answer = await gateway.request(`${PREFIX}/runners/${runnerId}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${gateway.memberToken(member)}` },
  });
  expect(answer.status).toBe(200);
}

/** Sends `GET work` every 10 ms until it is refused; returns when the refused one was sent. */
async function firstRefusal(gateway: RunnerGateway, token: string, timeoutMs = 3_000): Promise<{ sentAt: number; status: number }> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const sentAt = performance.now();
    const status = await work(gateway, token);
    if (status !== 200) return { sentAt, status };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the runner was never refused");
}

describe("the registration cache", () => {
  it("serves a runner's requests without a registration read, and replica B refuses it at once when A's revoke hint arrives", async () => {
    const member = { organizationId: "org_cache", memberId: `mem_cache_hint_${Date.now()}` };
    const { gateway: a } = await countedReplica();
    const { gateway: b, counts } = await countedReplica({ audiences: [a.baseUrl] });
    const token = await a.registerRunner(member, "runner-cache-hint-01");
    const before = counts.registrationReads;
    const filledAt = performance.now();
    for (let i = 0; i < 5; i++) expect(await work(b, token)).toBe(200);
    // Five requests, one read: the others came from B's cache (1 s).
    expect(counts.registrationReads - before).toBe(1);
    await revoke(a, member, "runner-cache-hint-01");
    const refused = await firstRefusal(b, token);
    expect(refused.status).toBe(401);
    // B read the registration just after filledAt and would serve it for 1 s from then: only the hint refuses it this
    // soon (the entry's own end lands at ~1 000 ms; the hint takes milliseconds, the margin is for a loaded machine).
    expect(refused.sentAt - filledAt).toBeLessThan(800);
  });

  it("with the revoke hints lost, the revoking replica refuses at once and every other within 1 s", async () => {
    const member = { organizationId: "org_cache", memberId: `mem_cache_lost_${Date.now()}` };
    const { gateway: a } = await countedReplica({ bus: droppingRevokes });
    const { gateway: b } = await countedReplica({ audiences: [a.baseUrl] });
    const token = await a.registerRunner(member, "runner-cache-lost-01");
    expect(await work(a, token)).toBe(200);
    expect(await work(b, token)).toBe(200);
    const revokeSentAt = performance.now();
    await revoke(a, member, "runner-cache-lost-01");
    // A forgot the runner itself, after its commit: no hint needed.
    expect(await work(a, token)).toBe(401);
    // B heard nothing: it serves its entry (read before the revocation) until the entry's second is up…
    expect(await work(b, token)).toBe(200);
    // …and no longer: B's entry was read before revokeSentAt, so a request sent 1 s after it is refused, whatever the load.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, revokeSentAt + 1_000 - performance.now())));
    expect(await work(b, token)).toBe(401);
  });

  it("saves the registration's round trip: 20 heartbeats cost one registration read, 20 with the cache off", async () => {
    const member = { organizationId: "org_cache", memberId: `mem_cache_count_${Date.now()}` };
    const heartbeats = 20;
    const { gateway: cached, counts: withCache } = await countedReplica();
    const { gateway: uncached, counts: withoutCache } = await countedReplica({ timings: { registrationCacheMs: 0 } });
    const tokens = new Map<RunnerGateway, string>();
    for (const gateway of [cached, uncached]) tokens.set(gateway, await gateway.registerRunner(member, "runner-cache-count-1"));
    for (const title of ["one", "two"]) await cached.sessions.create(cached.call(member), { title, prompt: `question ${title}` });
    const drive = async (gateway: RunnerGateway, counts: { statements: number; registrationReads: number }) => {
      const client = createRunnerClient({ baseUrl: gateway.serverUrl, token: tokens.get(gateway)! });
      const assignment = await client.claimNext();
      // The first heartbeat prepares its statements; the next ones are counted.
      await client.heartbeat(assignment!.taskId, assignment!.attempt);
      const start = { ...counts };
      const startedAt = performance.now();
      for (let i = 0; i < heartbeats; i++) await client.heartbeat(assignment!.taskId, assignment!.attempt);
      return {
        registrationReads: counts.registrationReads - start.registrationReads,
        statements: counts.statements - start.statements,
        seconds: (performance.now() - startedAt) / 1000,
      };
    };
    const on = await drive(cached, withCache);
    const off = await drive(uncached, withoutCache);
    expect(off.registrationReads).toBe(heartbeats);
    // One read per second the heartbeats took at most (they take a few ms each on a quiet machine).
    expect(on.registrationReads).toBeLessThanOrEqual(Math.ceil(on.seconds));
    // The heartbeats' own statements are the same: the cache removed the reads, nothing else.
    expect(off.statements - on.statements).toBe(off.registrationReads - on.registrationReads);
  });

  it("keeps asking whether the member is active: a member removed while its runner's registration is cached is refused at once", async () => {
    const member = { organizationId: "org_cache", memberId: `mem_cache_member_${Date.now()}` };
    const { gateway, counts } = await countedReplica();
    const token = await gateway.registerRunner(member, "runner-cache-membr1");
    expect(await work(gateway, token)).toBe(200);
    const reads = counts.registrationReads;
    expect(await work(gateway, token)).toBe(200);
    expect(counts.registrationReads).toBe(reads);
    gateway.removeMember(member);
    const refused = await fetch(`${gateway.serverUrl}${PREFIX}/work`, { headers: { authorization: `Bearer ${token}` } });
    expect([refused.status, await refused.json()]).toEqual([403, expect.objectContaining({ error: "membership_required" })]);
  });

  it("keeps presence: a stream opened on B reads past B's cache, so it clears the disconnect A marked meanwhile", async () => {
    const member = { organizationId: "org_cache", memberId: `mem_cache_presence_${Date.now()}` };
    const { gateway: a } = await countedReplica();
    const { gateway: b } = await countedReplica({ audiences: [a.baseUrl] });
    const token = await a.registerRunner(member, "runner-cache-prsnc1");
    const disconnectedAt = async () =>
      (await a.sql<{ disconnected_at: Date | null }[]>`select disconnected_at from desktop_runner where runner_id = 'runner-cache-prsnc1'`)[0]!.disconnected_at;
    const stream = (gateway: RunnerGateway, signal: AbortSignal) =>
      fetch(`${gateway.serverUrl}${PREFIX}/events`, { headers: { authorization: `Bearer ${token}` }, signal });
    const onA = new AbortController();
    const reader = (await stream(a, onA.signal)).body!.getReader();
    await reader.read();
    // B holds the registration from here, for 1 s.
    const filledAt = performance.now();
    expect(await work(b, token)).toBe(200);
    onA.abort();
    await expect.poll(disconnectedAt, { timeout: 3_000 }).not.toBeNull();
    const onB = new AbortController();
    const reopened = await stream(b, onB.signal);
    expect(reopened.status).toBe(200);
    await reopened.body!.getReader().read();
    // Within B's cache window (else this proves nothing): the stream's opening cleared the mark.
    expect(performance.now() - filledAt).toBeLessThan(1_000);
    expect(await disconnectedAt()).toBeNull();
    onB.abort();
  });
});
