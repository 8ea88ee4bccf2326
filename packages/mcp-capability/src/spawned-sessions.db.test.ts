import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import type { SessionLedger } from "@openwork/remote-session-core/internal";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionSource } from "./create-remote-session-source.js";
import { contextFromAuthInfo } from "./mcp-tools.js";
import { parseName } from "./parse-name.js";
import { remoteSessionContext } from "./registry-context.js";
import { createScriptedTarget, type ScriptedTarget } from "./scripted-target.testing.js";
import { createSessionCredentials } from "./session-credential.js";

// Sessions that start sessions: the spawner comes from the caller's verified session credential
// (the host puts it in the context), never from arguments.
const db = useTestDatabase();
const member = { organizationId: "org_s", userId: "user_s", orgMembershipId: "mem_s", scopes: ["mcp:read", "mcp:write"] };
const person = remoteSessionContext(member);
const engineOf = (sessionId: string) => remoteSessionContext({ ...member, callerSessionId: sessionId });
let desktop: ScriptedTarget;
let ledger: SessionLedger;

beforeAll(async () => {
  await migrate(db.current.sql);
  desktop = createScriptedTarget("desktop");
  ledger = createSessionLedger(db.current.sql);
});

function source(spawnRules = { maxDepth: 3, maxLivePerSpawner: 4 }) {
  const s = createRemoteSessionSource({ targets: [desktop], ledger, spawnRules, createRateLimit: { bucket: "create", limit: 1000, windowMs: 60_000 } });
  return async (ctx: ReturnType<typeof remoteSessionContext>, name: string, body: unknown): Promise<Record<string, unknown>> => {
    const result = await s.execute(ctx, parseName(`remote-session:${name}`)!, { body });
    return { ...result.structuredContent, isError: result.isError === true };
  };
}

describe("provenance through the capability", () => {
  it("a create from a session's engine names its spawner in create, read and list; a person's create names none", async () => {
    const run = source();
    const root = await run(person, "create", { title: "Coordinator", prompt: "split the work" });
    expect(root).not.toHaveProperty("spawnedBy");
    const child = await run(engineOf(String(root.sessionId)), "create", { title: "Worker", prompt: "do part one" });
    expect(child).toMatchObject({ spawnedBy: { sessionId: root.sessionId, title: "Coordinator" }, depth: 1 });
    expect(child.provenance).toBe(`started by session “Coordinator” (${root.sessionId}), at depth 1 of at most 3`);

    const readChild = await run(person, "read", { sessionId: child.sessionId });
    expect(readChild).toMatchObject({ spawnedBy: { sessionId: root.sessionId, title: "Coordinator" }, depth: 1 });
    const readRoot = await run(person, "read", { sessionId: root.sessionId });
    expect(readRoot.spawned).toEqual([{ sessionId: child.sessionId, title: "Worker", target: "desktop", state: expect.any(String) }]);
    expect(readRoot).not.toHaveProperty("spawnedBy");

    const listed = await run(person, "list", { spawnedBy: root.sessionId });
    expect((listed.sessions as { sessionId: string; spawnedBy: string }[]).map((s) => [s.sessionId, s.spawnedBy])).toEqual([[child.sessionId, root.sessionId]]);
  });

  it("an argument cannot set the spawner", async () => {
    const run = source();
    const root = await run(person, "create", { title: "Root" });
    const forged = await run(person, "create", { title: "Forged", spawnedBy: root.sessionId });
    // Set aside and named, like every member create does not take: the session is a person's.
    expect(forged).toMatchObject({ isError: false, ignored: expect.arrayContaining(["spawnedBy"]) });
    expect(forged).not.toHaveProperty("spawnedBy");
    expect((await ledger.find({ organizationId: member.organizationId, userId: member.userId }, String(forged.sessionId)))?.spawnedBy).toBeNull();
  });

  it("refuses the fourth level with a reason, writing nothing", async () => {
    const run = source();
    let spawner = String((await run(person, "create", { title: "Level 0" })).sessionId);
    for (let depth = 1; depth <= 3; depth++) spawner = String((await run(engineOf(spawner), "create", { title: `Level ${depth}` })).sessionId);
    const before = await db.current.sql`select count(*)::int as n from remote_session`;
    const refused = await run(engineOf(spawner), "create", { title: "Level 4", prompt: "go deeper" });
    expect(refused).toMatchObject({ isError: true, error: "spawn_depth_exceeded", retryable: false });
    expect(String(refused.message)).toMatch(/depth 4, past the limit of 3/);
    expect(await db.current.sql`select count(*)::int as n from remote_session`).toEqual(before);
  });

  it("stop {cascade: true} stops the session and everything below it", async () => {
    const run = source();
    const root = String((await run(person, "create", { title: "Tree", prompt: "go" })).sessionId);
    const a = String((await run(engineOf(root), "create", { title: "A", prompt: "go" })).sessionId);
    const b = String((await run(engineOf(root), "create", { title: "B", prompt: "go" })).sessionId);
    const a1 = String((await run(engineOf(a), "create", { title: "A1", prompt: "go" })).sessionId);
    const outside = String((await run(person, "create", { title: "Not in the tree", prompt: "go" })).sessionId);
    const stopped = await run(person, "stop", { sessionId: root, cascade: true });
    expect(stopped).toMatchObject({ sessionId: root, stopped: true, state: "stopped", cascade: { stopped: 3 } });
    expect((stopped.cascade as { sessions: { sessionId: string }[] }).sessions.map((s) => s.sessionId).sort()).toEqual([a, b, a1].sort());
    for (const id of [root, a, b, a1]) expect((await ledger.find({ organizationId: member.organizationId, userId: member.userId }, id))?.state).toBe("stopped");
    expect((await ledger.find({ organizationId: member.organizationId, userId: member.userId }, outside))?.state).not.toBe("stopped");
    // The stopped spawner's engine starts nothing more.
    expect(await run(engineOf(a), "create", { title: "late" })).toMatchObject({ isError: true, error: "session_not_active" });
  });
});

describe("what a tree spent", () => {
  it("read shows a session's spend and, for a spawner, its whole tree's; list shows each session's", async () => {
    const run = source();
    const root = String((await run(person, "create", { title: "Spending root", prompt: "go" })).sessionId);
    const child = String((await run(engineOf(root), "create", { title: "Spending child", prompt: "go" })).sessionId);
    const grandchild = String((await run(engineOf(child), "create", { title: "Spending grandchild", prompt: "go" })).sessionId);
    // What each one's target recorded, as a desktop's reported steps are.
    const spent = {
      [root]: { tokensIn: 100, tokensOut: 20, costMicros: 1_000 },
      [child]: { tokensIn: 10, tokensOut: 5 },
      [grandchild]: { tokensIn: 1, tokensOut: 2, costMicros: 500, runningMs: 40 },
    };
    for (const [id, delta] of Object.entries(spent)) await ledger.update({ organizationId: member.organizationId, id }, { spent: delta });

    const readRoot = await run(person, "read", { sessionId: root });
    expect(readRoot.spend).toEqual({ tokens: 120, tokensIn: 100, tokensOut: 20, costUsd: 0.001, runningMs: 0, usage: "reported" });
    expect(readRoot.treeSpend).toEqual({ tokens: 138, tokensIn: 111, tokensOut: 27, costUsd: 0.0015, runningMs: 40, usage: "reported" });
    const readChild = await run(person, "read", { sessionId: child });
    expect(readChild.treeSpend).toMatchObject({ tokens: 18, costUsd: 0.0005 });
    const readLeaf = await run(person, "read", { sessionId: grandchild });
    expect(readLeaf).not.toHaveProperty("treeSpend");
    const listed = (await run(person, "list", { spawnedBy: child })).sessions as { sessionId: string; spend: unknown }[];
    expect(listed).toEqual([
      expect.objectContaining({ sessionId: grandchild, spend: { tokens: 3, tokensIn: 1, tokensOut: 2, costUsd: 0.0005, runningMs: 40, usage: "reported" } }),
    ]);
  });
});

describe("a cascade stop racing creates", () => {
  it("ends the tree's right to create at once: each racing create is refused, or landed before and is stopped with the rest", async () => {
    // A desktop's stop: taken at once, while the ledger keeps running until its runner cancels.
    const later = createScriptedTarget("desktop", { stopsLater: true });
    const s = createRemoteSessionSource({
      targets: [later],
      ledger,
      spawnRules: { maxDepth: 3, maxLivePerSpawner: 64 },
      createRateLimit: { bucket: "create", limit: 1000, windowMs: 60_000 },
    });
    const run = async (ctx: ReturnType<typeof remoteSessionContext>, name: string, body: unknown): Promise<Record<string, unknown>> => {
      const result = await s.execute(ctx, parseName(`remote-session:${name}`)!, { body });
      return { ...result.structuredContent, isError: result.isError === true };
    };
    const root = String((await run(person, "create", { title: "Racing root", prompt: "go" })).sessionId);
    const child = String((await run(engineOf(root), "create", { title: "Racing child", prompt: "go" })).sessionId);
    const creates = Array.from({ length: 40 }, (_, i) => run(engineOf(i % 2 ? child : root), "create", { title: `Racer ${i}`, prompt: "go" }));
    const stopped = await run(person, "stop", { sessionId: root, cascade: true });
    expect(stopped).toMatchObject({ isError: false, stopped: true });
    const results = await Promise.all(creates);
    for (const result of results.filter((r) => r.isError)) expect(result).toMatchObject({ error: "session_not_active" });
    // Nothing in the tree is left running unstopped: every session the stop's answer did not
    // name was refused, and every one that landed was stopped by it.
    const tree = await ledger.tree({ organizationId: member.organizationId, userId: member.userId }, root);
    const landed = results.filter((r) => !r.isError).map((r) => String(r.sessionId));
    expect(tree.map((s) => s.id).sort()).toEqual([child, ...landed].sort());
    expect(tree.filter((s) => !later.stopsTaken.has(s.id)).map((s) => s.id)).toEqual([]);
    expect(later.stopsTaken.has(root)).toBe(true);
    // After the stop, every engine of the tree is refused.
    for (const id of [root, child, ...landed]) {
      expect(await run(engineOf(id), "create", { title: "after" })).toMatchObject({ isError: true, error: "session_not_active" });
    }
    // A new prompt gives the spawner its right back.
    await run(person, "send", { sessionId: root, prompt: "again" });
    expect(await run(engineOf(root), "create", { title: "after a new prompt" })).toMatchObject({ isError: false });
  });
});

describe("what a session's engine may do", () => {
  it("acts on its own session and what it started; the member's other sessions look like none; it never answers", async () => {
    const run = source();
    const mine = String((await run(person, "create", { title: "Mine", prompt: "go" })).sessionId);
    const other = String((await run(person, "create", { title: "Another of the member's", prompt: "go" })).sessionId);
    const child = String((await run(engineOf(mine), "create", { title: "Child", prompt: "go" })).sessionId);
    const engine = engineOf(mine);
    expect(await run(engine, "read", { sessionId: child })).toMatchObject({ isError: false, sessionId: child });
    expect(await run(engine, "read", { sessionId: mine })).toMatchObject({ isError: false, sessionId: mine });
    const foreign = await run(engine, "read", { sessionId: other });
    const missing = await run(person, "read", { sessionId: `rs_${"z".repeat(26)}` });
    expect(foreign).toMatchObject({ isError: true, error: "unknown_session" });
    expect(foreign.message).toBe(missing.message);
    expect(await run(engine, "stop", { sessionId: other })).toMatchObject({ isError: true, error: "unknown_session" });
    // By a receipt too: its own tree answers; the member's other session is as unknown as a receipt nobody has.
    expect(await run(engine, "read", { commandId: `cmd_${child}` })).toMatchObject({ isError: false, sessionId: child });
    const outside = await run(engine, "read", { commandId: `cmd_${other}` });
    const nobody = await run(engine, "read", { commandId: `cmd_rs_${"z".repeat(26)}` });
    expect(outside).toMatchObject({ isError: true, error: "unknown_command" });
    expect(Object.keys(outside)).toEqual(Object.keys(nobody));
    expect(await run(engine, "stop", { commandId: `cmd_${other}` })).toMatchObject({ isError: true, error: "unknown_command" });
    expect(await run(engine, "send", { sessionId: other, prompt: "steer it" })).toMatchObject({ isError: true, error: "unknown_session" });
    desktop.ask(child, { kind: "permission", id: "per_engine", title: "bash", detail: "rm -rf /", askedAt: new Date().toISOString() });
    expect(await run(engine, "respond", { sessionId: child, requestId: "per_engine", answer: { permission: "always" } })).toMatchObject({
      isError: true,
      error: "insufficient_mcp_scope",
    });
    // Its list is its tree: what it started, never the member's other sessions.
    const listed = (await run(engine, "list", {})).sessions as { sessionId: string }[];
    expect(listed.map((s) => s.sessionId)).toEqual([child]);
    expect((await run(engine, "list", { spawnedBy: other })).sessions).toEqual([]);
  });

  it("a credential of a session that ended does nothing more", async () => {
    const run = source();
    const ended = String((await run(person, "create", { title: "Ended", prompt: "go" })).sessionId);
    const child = String((await run(engineOf(ended), "create", { title: "Its child" })).sessionId);
    await ledger.update({ organizationId: member.organizationId, id: ended }, { state: "stopped" });
    expect(await run(engineOf(ended), "read", { sessionId: child })).toMatchObject({ isError: true, error: "session_not_active" });
    // Its list too: an ended session's engine no longer sees its subtree.
    expect(await run(engineOf(ended), "list", {})).toMatchObject({ isError: true, error: "session_not_active" });
  });

  it("a prompt that revives a spawned session counts against its spawner's live limit", async () => {
    const run = source({ maxDepth: 3, maxLivePerSpawner: 1 });
    const spawner = String((await run(person, "create", { title: "Spawner", prompt: "go" })).sessionId);
    const first = String((await run(engineOf(spawner), "create", { title: "First" })).sessionId);
    const second = await run(engineOf(spawner), "create", { title: "Second", prompt: "go" });
    expect(second).toMatchObject({ isError: false });
    // First is idle (no prompt): reviving it would make two live children of a spawner allowed one.
    expect(await run(person, "send", { sessionId: first, prompt: "now work" })).toMatchObject({ isError: true, error: "spawn_limit_reached" });
  });
});

describe("session credentials", () => {
  const secret = "s".repeat(32);
  const audience = "http://127.0.0.1:1/mcp/agent";
  const claims = { organizationId: "org_s", userId: "user_s", memberId: "mem_s", sessionId: `rs_${"a".repeat(26)}`, depth: 1 };

  it("verifies its own, and refuses tampered, expired, foreign-audience and other-secret credentials", () => {
    let now = 1_000_000;
    const credentials = createSessionCredentials({ secret, audience, ttlMs: 60_000, now: () => now });
    const { token, expiresAt } = credentials.issue(claims);
    expect(credentials.isSessionCredential(token)).toBe(true);
    expect(credentials.verify(token)).toEqual({ ok: true, claims: { ...claims, expiresAt } });
    const [head, payload, mac] = token.split(".");
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), s: `rs_${"b".repeat(26)}` })).toString(
      "base64url",
    );
    expect(credentials.verify(`${head}.${forgedPayload}.${mac}`)).toEqual({ ok: false, reason: "bad_signature" });
    expect(createSessionCredentials({ secret: "t".repeat(32), audience }).verify(token)).toEqual({ ok: false, reason: "bad_signature" });
    expect(createSessionCredentials({ secret, audience: "http://elsewhere/mcp", now: () => now }).verify(token)).toEqual({
      ok: false,
      reason: "wrong_audience",
    });
    expect(credentials.verify("owsc1.garbage")).toEqual({ ok: false, reason: "malformed" });
    // One credential, one spelling: base64url would forgive a stray character.
    expect(credentials.verify(`${token.slice(0, -2)}$${token.slice(-2)}`)).toEqual({ ok: false, reason: "bad_signature" });
    now += 60_000;
    expect(credentials.verify(token)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a secret shorter than 32 bytes and a lifetime past a day", () => {
    expect(() => createSessionCredentials({ secret: "short", audience })).toThrow(/32 bytes/);
    expect(() => createSessionCredentials({ secret, audience, ttlMs: 25 * 3_600_000 })).toThrow(/ttlMs/);
  });

  it("the default context reads the spawner only from the verified auth's remoteSessionId", () => {
    const auth = {
      token: "t",
      clientId: "c",
      scopes: ["mcp:read"],
      extra: { organizationId: "o", userId: "u", memberId: "m", remoteSessionId: claims.sessionId },
    };
    expect(contextFromAuthInfo(auth)?.remoteSession).toEqual({ sessionId: claims.sessionId });
    expect(contextFromAuthInfo({ ...auth, extra: { organizationId: "o", userId: "u", memberId: "m" } })).not.toHaveProperty("remoteSession");
  });
});
