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

async function sleepingWorker(wakeDelayMs: number, budgetMs: number, extra: { hasWorker?: (memberId: string) => boolean } = {}) {
  const witness = await startWitnessWorker({ clientToken: "client-token-123", hostToken: "host-token-123", gatewayKey: "key-123456", asleep: true, wakeDelayMs, ...extra });
  witnesses.push(witness);
  const target = createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "key-123456" }),
    isCloudEnabled: async () => true,
    budgetMs,
    wakePollMs: 100,
  });
  const member = { organizationId: "org_wake", userId: `user_wake_${members + 1}`, memberId: `mem_wake_${++members}` };
  const listed = async () => (await createSessionLedger(db.current.sql).list(member, { limit: 50 })).sessions;
  return { witness, target: targetSessions(target, createSessionLedger(db.current.sql)), member, listed, call: () => ({ ...member, referenceId: newReferenceId() }) };
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

  it("answers needs_cloud_setup with the human step when the member has no worker", async () => {
    const { target, call } = await sleepingWorker(100, 1_000, { hasWorker: () => false });
    expect(await target.create(call(), { title: "t" }).catch(errorOf)).toMatchObject({
      error: "needs_cloud_setup",
      retryable: false,
      action: expect.stringContaining("OpenWork Cloud"),
    });
  });
});
