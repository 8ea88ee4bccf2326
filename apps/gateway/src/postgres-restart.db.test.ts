import { parseName } from "@openwork/mcp-capability";
import { createSessionLedger } from "@openwork/remote-session-core";
import { startEmbeddedPostgres } from "@openwork/test-postgres";
import postgres from "postgres";
import { expect, it } from "vitest";
import { type DevMember, fixedDevMember, memberCall, memberContext } from "./dev-members.js";
import { startCountingRunners } from "./testing/counting-runners.js";
import { serveGateway } from "./serve-gateway.js";

const member: DevMember = fixedDevMember("restart-pg", ["mcp:write"]);

// PostgreSQL restarts under load (a server of this file's own). The pool and the LISTEN
// connection recover by themselves, the runners' streams come back, and every task whose create
// succeeded — before, during or after the outage — is run exactly once.
it("recovers from a PostgreSQL restart under load: nothing lost, nothing run twice", async () => {
  const server = await startEmbeddedPostgres();
  const sql = postgres(server.url, { max: 10, onnotice: () => {} });
  const gateway = await serveGateway({
    sql,
    port: 0,
    members: () => [member],
    cloudEnabled: () => false,
    runnerTokenSecret: "pg-restart-runner-secret-0123456789",
    createRateLimit: { bucket: "create", limit: 1_000_000, windowMs: 60_000 },
    timings: { leaseMs: 10_000, heartbeatIntervalMs: 1_000, sweepIntervalMs: 500 },
  });
  // The backstop poll is far away: delivery depends on the wake path surviving the restart.
  const { runs, stop } = await startCountingRunners({
    baseUrl: gateway.baseUrl,
    member,
    idPrefix: "runner-pg-restart",
    count: 3,
    pollIntervalMs: 600_000,
    workMs: 20,
    retryLimit: 2,
    backoffMaxMs: 500,
  });
  try {
    while (gateway.hub.stats().runnerStreams < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    const listensBefore = gateway.hub.stats().listens;

    const created: string[] = [];
    const refusals = new Set<string>();
    const ctx = memberContext(member);
    // Load runs until enough creates have succeeded, not for a fixed time: on a loaded machine a
    // fixed window could hold too few creates to say anything about the restart.
    const load = async (enough: () => boolean, what: string) => {
      const deadline = Date.now() + 45_000;
      while (!enough()) {
        if (Date.now() > deadline) throw new Error(`load: ${what} not reached (${created.length} created)`);
        const result = await gateway.source.execute(ctx, parseName("remote-session:create")!, {
          body: { target: "desktop", deliverBy: new Date(Date.now() + 600_000).toISOString(), prompt: "p" },
        });
        if (result.isError)
          refusals.add(`${(result.structuredContent as { error: string }).error}/${String((result.structuredContent as { retryable: boolean }).retryable)}`);
        else created.push(String(result.structuredContent!.sessionId));
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    };
    // Before: 30 creates. During: creates keep coming while the server restarts. After: 30 more
    // creates once the server is back.
    await load(() => created.length >= 30, "30 creates before the restart");
    let restarted = false;
    const restarting = server.restart().then(() => {
      restarted = true;
    });
    let createdAtRestart = Number.POSITIVE_INFINITY;
    await load(() => {
      if (restarted && createdAtRestart === Number.POSITIVE_INFINITY) createdAtRestart = created.length;
      return created.length >= createdAtRestart + 30;
    }, "30 creates after the restart");
    await restarting;

    // The LISTEN connection comes back by itself and says so (onlisten), and the streams with it.
    const relisten = Date.now() + 30_000;
    while (gateway.hub.stats().listens <= listensBefore) {
      if (Date.now() > relisten) throw new Error("the LISTEN connection never came back");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ledger = createSessionLedger(sql);
    const deadline = Date.now() + 30_000;
    for (;;) {
      // A pooled connection cut by the restart fails its next query once; look again.
      const states = await Promise.all(created.map(async (id) => (await ledger.find(memberCall(member), id).catch(() => null))?.state));
      if (states.every((s) => s === "idle")) break;
      if (Date.now() > deadline) {
        const late = created.filter((_, i) => states[i] !== "idle");
        const tasks =
          await sql`select session_id, state, attempt, claimed_by_runner_id, lease_expires_at, created_at from desktop_task where session_id in ${sql(late)}`;
        throw new Error(
          `not delivered: ${late.length} of ${created.length}: ${JSON.stringify({ states: late.map((id) => states[created.indexOf(id)]), tasks })}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(created.length).toBeGreaterThan(50);
    for (const id of created) expect(runs.get(id), id).toBe(1);
    // A create whose commit reached the server just as the connection died is answered with a
    // retryable error although its session exists: it must still run once, and only once.
    const stored = await sql<{ id: string }[]>`select id from remote_session where user_id = ${memberCall(member).userId}`;
    const storedIds = new Set(stored.map((row) => row.id));
    for (const [id, count] of runs) {
      expect(storedIds.has(id), id).toBe(true);
      expect(count, id).toBe(1);
    }
    expect(gateway.hub.stats().runnerStreams).toBe(3);
    // Creates refused during the outage got a typed, retryable error.
    for (const refusal of refusals) expect(refusal).toBe("internal_error/true");
  } finally {
    await stop();
    await gateway.close();
    await sql.end({ timeout: 5 });
    await server.stop();
  }
}, 120_000);
