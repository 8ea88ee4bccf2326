import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionFailure } from "../errors/session-error.js";
import { newSessionId } from "../ids.js";
import { migrate } from "../migrate.js";
import { createRemoteSessions } from "../sessions.js";
import type { TargetCall } from "../target.js";
import { DEFAULT_SPAWN_RULES } from "./reserve-spawned-session.js";
import { runningTarget } from "./running-target.testing.js";
import { createSessionLedger } from "./session-ledger.js";

const db = useTestDatabase();
const call: TargetCall = { organizationId: "org_1", userId: "user_alice", memberId: "mem_alice", referenceId: "ref_test" };
const bob: TargetCall = { ...call, userId: "user_bob", memberId: "mem_bob" };
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error.error : error);

const rules = { maxDepth: 3, maxLivePerSpawner: 4 };

beforeAll(async () => {
  await migrate(db.current.sql);
});

describe("sessions that start sessions", () => {
  it("records the spawner, the root and the depth, and lists a spawner's sessions", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const sessions = createRemoteSessions(ledger);
    const { target } = runningTarget();
    const root = await sessions.create(call, target, { title: "root", extra: {} });
    expect(root.spawnedBy).toBeUndefined();
    const child = await sessions.create(call, target, { title: "child", extra: {} }, { spawn: { spawnerId: root.sessionId, rules } });
    const grandchild = await sessions.create(call, target, { title: "grandchild", extra: {} }, { spawn: { spawnerId: child.sessionId, rules } });
    expect(child).toMatchObject({ spawnedBy: root.sessionId, depth: 1 });
    expect(grandchild).toMatchObject({ spawnedBy: child.sessionId, depth: 2 });
    expect(await ledger.find(call, grandchild.sessionId)).toMatchObject({ spawnedBy: child.sessionId, rootId: root.sessionId, depth: 2 });
    const listed = await ledger.list(call, { spawnedBy: root.sessionId, limit: 10 });
    expect(listed.sessions.map((s) => s.id)).toEqual([child.sessionId]);
    expect((await ledger.tree(call, root.sessionId)).map((s) => s.id)).toEqual([child.sessionId, grandchild.sessionId]);
    // Another member sees none of it.
    expect(await ledger.tree(bob, root.sessionId)).toEqual([]);
    expect((await ledger.list(bob, { spawnedBy: root.sessionId, limit: 10 })).sessions).toEqual([]);
  });

  it("refuses a chain past the depth limit before anything is written", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const sessions = createRemoteSessions(ledger);
    const { target, made } = runningTarget();
    let spawner = (await sessions.create(call, target, { title: "level 0", extra: {} })).sessionId;
    for (let depth = 1; depth <= DEFAULT_SPAWN_RULES.maxDepth; depth++) {
      spawner = (await sessions.create(call, target, { title: `level ${depth}`, extra: {} }, { spawn: { spawnerId: spawner, rules } })).sessionId;
    }
    const before = await db.current.sql`select count(*)::int as n from remote_session`;
    const admitted: string[] = [];
    const refused = sessions.create(
      call,
      target,
      { title: "too deep", extra: {} },
      { spawn: { spawnerId: spawner, rules }, admit: async () => void admitted.push("hit") },
    );
    await expect(refused.catch(codeOf)).resolves.toBe("spawn_depth_exceeded");
    expect(await db.current.sql`select count(*)::int as n from remote_session`).toEqual(before);
    // Refused before the rate limit counted it, and the target was never asked.
    expect(admitted).toEqual([]);
    expect(made).toHaveLength(DEFAULT_SPAWN_RULES.maxDepth + 1);
  });

  it("holds the fan-out limit under a concurrent batch, and frees a place when a child ends", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const sessions = createRemoteSessions(ledger);
    const { target } = runningTarget();
    const spawner = (await sessions.create(call, target, { title: "spawner", extra: {} })).sessionId;
    const batch = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => sessions.create(call, target, { title: `child ${i}`, extra: {} }, { spawn: { spawnerId: spawner, rules } })),
    );
    const created = batch.filter((r) => r.status === "fulfilled");
    expect(created).toHaveLength(rules.maxLivePerSpawner);
    expect(batch.filter((r) => r.status === "rejected").map((r) => codeOf((r as PromiseRejectedResult).reason))).toEqual(
      Array(12 - rules.maxLivePerSpawner).fill("spawn_limit_reached"),
    );
    expect(await ledger.liveSpawned(call, spawner)).toBe(rules.maxLivePerSpawner);
    const [first] = created as PromiseFulfilledResult<{ sessionId: string }>[];
    await ledger.update({ organizationId: call.organizationId, id: first!.value.sessionId }, { state: "idle" });
    await expect(sessions.create(call, target, { title: "one more", extra: {} }, { spawn: { spawnerId: spawner, rules } })).resolves.toMatchObject({
      spawnedBy: spawner,
    });
  });

  it("refuses a spawner that has ended, one that is not the caller's, and one that does not exist", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const sessions = createRemoteSessions(ledger);
    const { target } = runningTarget();
    const spawner = (await sessions.create(call, target, { title: "spawner", extra: {} })).sessionId;
    const spawn = { spawn: { spawnerId: spawner, rules } };
    await expect(sessions.create(bob, target, { title: "foreign", extra: {} }, spawn).catch(codeOf)).resolves.toBe("unknown_session");
    await expect(sessions.create(call, target, { title: "ghost", extra: {} }, { spawn: { spawnerId: newSessionId(), rules } }).catch(codeOf)).resolves.toBe(
      "unknown_session",
    );
    await ledger.update({ organizationId: call.organizationId, id: spawner }, { state: "stopped" });
    await expect(sessions.create(call, target, { title: "late", extra: {} }, spawn).catch(codeOf)).resolves.toBe("session_not_active");
    expect((await ledger.list(call, { spawnedBy: spawner, limit: 10 })).sessions).toEqual([]);
  });

  it("a retried create with its key returns the session it made, even once the spawner is full", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const sessions = createRemoteSessions(ledger);
    const { target } = runningTarget();
    const spawner = (await sessions.create(call, target, { title: "spawner", extra: {} })).sessionId;
    const tight = { spawnerId: spawner, rules: { ...rules, maxLivePerSpawner: 1 } };
    const first = await sessions.create(call, target, { title: "keyed", extra: {} }, { spawn: tight, idempotencyKey: "k1" });
    const again = await sessions.create(call, target, { title: "keyed", extra: {} }, { spawn: tight, idempotencyKey: "k1" });
    expect(again.sessionId).toBe(first.sessionId);
    await expect(sessions.create(call, target, { title: "other", extra: {} }, { spawn: tight }).catch(codeOf)).resolves.toBe("spawn_limit_reached");
  });
});
