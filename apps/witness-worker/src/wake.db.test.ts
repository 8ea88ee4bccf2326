import { createCloudTarget, createHttpWorkerResolver } from "@openwork/cloud-target";
import { createSessionLedger, migrate, newReferenceId, SessionFailure } from "@openwork/remote-session-core";
import { targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

const db = useTestDatabase();
const witnesses: RunningWitness[] = [];
let members = 0;

beforeAll(async () => {
  await migrate(db.current.sql);
});
afterEach(async () => {
  await Promise.all(witnesses.splice(0).map((w) => w.close()));
});

interface WorkerSetup {
  /** Whether the member's organization has cloud on den-api's side. Default true. */
  cloud?: boolean;
  /** The gateway key the resolver sends. Default the witness's. */
  gatewayKey?: string;
  /** Whether the resolver sends the member's credentials. Default true. */
  withCredentials?: boolean;
  errors?: string[];
}

async function sleepingWorker(wakeDelayMs: number, budgetMs: number, setup: WorkerSetup = {}) {
  const member = { organizationId: "org_wake", userId: `user_wake_${members + 1}`, memberId: `mem_wake_${++members}` };
  // den-api's member authentication: the member's session token names the member.
  const sessions = new Map([[`session-${member.memberId}`, { organizationId: member.organizationId, memberId: member.memberId, cloud: setup.cloud ?? true }]]);
  const witness = await startWitnessWorker({
    clientToken: "client-token-123",
    hostToken: "host-token-123",
    gatewayKey: "key-123456",
    asleep: true,
    wakeDelayMs,
    members: (token) => sessions.get(token) ?? null,
  });
  witnesses.push(witness);
  const target = createCloudTarget({
    resolver: createHttpWorkerResolver({
      baseUrl: witness.resolverUrl,
      gatewayKey: setup.gatewayKey ?? "key-123456",
      ...(setup.withCredentials === false ? {} : { memberHeaders: (scope) => ({ authorization: `Bearer session-${scope.memberId}` }) }),
    }),
    isCloudEnabled: async () => true,
    budgetMs,
    wakePollMs: 100,
    logger: { info: () => {}, warn: () => {}, error: (message) => void setup.errors?.push(message) },
  });
  const listed = async () => (await createSessionLedger(db.current.sql).list(member, { limit: 50 })).sessions;
  return {
    witness,
    target: targetSessions(target, createSessionLedger(db.current.sql)),
    member,
    listed,
    call: () => ({ ...member, referenceId: newReferenceId() }),
  };
}

const errorOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);

describe("waking a sleeping cloud worker", () => {
  it("answers cloud_runtime_waking past the budget without creating anything, then succeeds on retry", async () => {
    const { target, listed, call, witness } = await sleepingWorker(1_500, 400);
    const started = Date.now();
    const first = await target.create(call(), { title: "t", prompt: "hi" }).catch(errorOf);
    expect(first).toMatchObject({ error: "cloud_runtime_waking", retryable: true, retryAfterMs: expect.any(Number) });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await listed()).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const retried = await target.create(call(), { title: "t", prompt: "hi" });
    expect(retried.state).toBe("running");
    expect(await listed()).toHaveLength(1);
    expect(witness.stats().wakes).toBe(1);
  });

  it("never holds a read longer than its waitMs while the worker wakes", async () => {
    const { target, listed, call, witness } = await sleepingWorker(600, 10_000);
    const created = await target.create(call(), { title: "t" });
    await witness.sleep();
    // A stopped worker is a machine that is off: its port refuses connections.
    await expect(fetch(`${witness.url}/health`)).rejects.toThrow();
    const session = (await listed())[0]!;
    expect(session.id).toBe(created.sessionId);
    const started = Date.now();
    const read = await target.read(call(), session, { limit: 20, waitMs: 0 }).catch(errorOf);
    expect(read).toMatchObject({ error: "cloud_runtime_waking", retryable: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    // A read that may wait long enough gets its answer once the worker is up.
    await expect(target.read(call(), session, { limit: 20, waitMs: 5_000 })).resolves.toMatchObject({ sessionId: created.sessionId, state: "idle" });
  });

  it("shares one wait among six concurrent creates: one wake, one session", async () => {
    const { target, listed, call, witness, member } = await sleepingWorker(800, 5_000);
    const ledger = createSessionLedger(db.current.sql);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        ledger.idempotent(member, { operation: "create", key: "same-create", args: { title: "t" } }, () => target.create(call(), { title: "t" })),
      ),
    );
    expect(new Set(results.map((r) => r.result.sessionId)).size).toBe(1);
    expect(await listed()).toHaveLength(1);
    expect(witness.stats().wakes).toBe(1);
  });

  it("tells members a gateway key den-api refuses as retryable cloud unavailable, never as their own setup step, and the operator once", async () => {
    const errors: string[] = [];
    const { target, call } = await sleepingWorker(100, 1_000, { gatewayKey: "wrong-key", errors });
    for (let i = 0; i < 2; i++) {
      const failure = await target.create(call(), { title: "t" }).catch(errorOf);
      expect(failure).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true, message: expect.stringContaining("OpenWork Cloud is unavailable") });
      expect(failure).not.toHaveProperty("action");
    }
    expect(errors).toEqual([expect.stringContaining("check that the gateway key is den-api's")]);
  });

  it("authenticates the member from the request's own credentials, as den-api does", async () => {
    const errors: string[] = [];
    const without = await sleepingWorker(100, 1_000, { withCredentials: false, errors });
    expect(await without.target.create(without.call(), { title: "t" }).catch(errorOf)).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true });
    expect(errors).toEqual([expect.stringContaining("give createHttpWorkerResolver memberHeaders")]);
    // An organization without cloud gets den-api's same 404: unavailable, retryable, never "set up cloud".
    const off = await sleepingWorker(100, 1_000, { cloud: false });
    expect(await off.target.create(off.call(), { title: "t" }).catch(errorOf)).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true });
  });
});
