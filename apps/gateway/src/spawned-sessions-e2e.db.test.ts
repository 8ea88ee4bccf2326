import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createOpencodeEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember, userIdOf } from "./dev-members.js";
import { sessionCalls } from "./testing/session-calls.js";
import { startTestGateway } from "./testing/test-gateway.js";

// Sessions that start sessions, end to end: two desktops (two reference runners, each driving its
// own real opencode with the fake model). The agent of a session on desktop A calls the gateway's
// MCP entry its runner gave its opencode (the session's own credential) and starts a session on
// desktop B, which runs it; the guards and the cascade hold across the hops.
const db = useTestDatabase();
const member = fixedDevMember("spawner-e2e");
const SECRET = "spawned-e2e-runner-secret-0123456789abc";
const RULES = { maxDepth: 3, maxLivePerSpawner: 3 };
const CREATES_PER_MINUTE = 14;
const engines: RealOpencode[] = [];
const runners: Awaited<ReturnType<typeof startDesktopRunner>>[] = [];
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  engines.push(...(await Promise.all([startRealOpencode(), startRealOpencode()])));
  test = await startTestGateway(db.current.url, member, {
    runnerTokenSecret: SECRET,
    spawnRules: RULES,
    createRateLimit: { bucket: "create", limit: CREATES_PER_MINUTE, windowMs: 60_000 },
  });
  for (const [i, engine] of engines.entries()) {
    const id = i === 0 ? "desk-a" : "desk-b";
    runners.push(
      await startDesktopRunner({
        gatewayUrl: test.gateway.baseUrl,
        memberToken: member.sessionToken,
        runnerId: `${id}-runner-0001`,
        name: `Desktop ${id.slice(-1).toUpperCase()}`,
        engine: createOpencodeEngine({ url: engine.url, directory: engine.directory }),
      }),
    );
  }
  const deadline = Date.now() + 20_000;
  while (test.gateway.hub.stats().runnerStreams < 2) {
    if (Date.now() > deadline) throw new Error("the desktop runners never connected");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await test?.close();
  await Promise.all(engines.map((e) => e.stop()));
});

type Payload = Record<string, any>;
const { ok, readUntil } = sessionCalls((name, body) => test.execute(name, body));

/** An MCP client speaking as the engine of `sessionId` (a credential the gateway would issue it). */
async function engineOf(sessionId: string, depth: number) {
  const { authorization } = test.gateway.host.sessionCredentials!.issue({
    organizationId: member.organizationId,
    userId: userIdOf(member),
    memberId: member.memberId,
    sessionId,
    depth,
  });
  const client = new Client({ name: "engine", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), { requestInit: { headers: { authorization } } }));
  return {
    create: async (body: Record<string, unknown>) =>
      (await client.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body } })) as {
        isError?: boolean;
        structuredContent: Payload;
      },
    close: () => client.close(),
  };
}

describe("sessions that start sessions across two desktops", () => {
  let root: string;
  let child: string;

  it("an agent on desktop A starts a session on desktop B through its MCP entry; provenance shows from A, B and list", async () => {
    const body = { target: "desktop", runner: "desk-b-runner-0001", title: "Child on B", prompt: "hello from A" };
    const created = await ok("remote-session:create", {
      target: "desktop",
      runner: "desk-a-runner-0001",
      title: "Coordinator on A",
      prompt: `Delegate this.\nCAPABILITY ${JSON.stringify({ name: "remote-session:create", body })}`,
    });
    root = created.sessionId;
    const done = await readUntil(root, (r) => r.state === "idle" && r.finalAssistantText !== undefined);
    // The model called the gateway's tool through opencode A's MCP entry, and saw its answer.
    expect(done.finalAssistantText).toMatch(/the tool said/);
    expect(engines[0]!.llmRequests.some((r) => r.tools.some((t) => t.endsWith("execute_capability")))).toBe(true);

    const listed = await ok("remote-session:list", { spawnedBy: root });
    expect(listed.sessions).toHaveLength(1);
    child = listed.sessions[0].sessionId;
    expect(listed.sessions[0]).toMatchObject({ spawnedBy: root, depth: 1, title: "Child on B" });

    const childRead = await readUntil(child, (r) => r.state === "idle" && r.finalAssistantText !== undefined);
    expect(childRead).toMatchObject({ spawnedBy: { sessionId: root, title: "Coordinator on A" }, depth: 1 });
    expect(childRead.finalAssistantText).toContain("hello from A");
    // It ran on desktop B's engine, not A's.
    expect(engines[1]!.llmRequests.some((r) => r.lastUserText.includes("hello from A"))).toBe(true);
    expect(engines[0]!.llmRequests.some((r) => r.lastUserText === "hello from A")).toBe(false);

    const rootRead = await ok("remote-session:read", { sessionId: root });
    expect(rootRead.spawned).toEqual([expect.objectContaining({ sessionId: child, title: "Child on B" })]);
  }, 120_000);

  it("refuses the fourth level and holds the fan-out cap under a concurrent batch", async () => {
    // Levels 2 and 3 below the child, through their engines' credentials.
    const fromChild = await engineOf(child, 1);
    const created = async (engine: Awaited<ReturnType<typeof engineOf>>, title: string) => {
      const result = await engine.create({ target: "desktop", title });
      if (result.isError) throw new Error(`${title}: ${JSON.stringify(result.structuredContent)}`);
      return result.structuredContent.sessionId as string;
    };
    const level2 = await created(fromChild, "Level 2");
    const fromLevel2 = await engineOf(level2, 2);
    const level3 = await created(fromLevel2, "Level 3");
    const fromLevel3 = await engineOf(level3, 3);
    const tooDeep = await fromLevel3.create({ target: "desktop", title: "Level 4", prompt: "deeper" });
    expect(tooDeep.structuredContent).toMatchObject({ error: "spawn_depth_exceeded", retryable: false });
    expect((await ok("remote-session:list", { spawnedBy: level3 })).sessions).toEqual([]);

    // The root keeps at most 3 live sessions; a batch of 6 at once makes 3 (the child is idle: not live).
    const fromRoot = await engineOf(root, 0);
    const batch = await Promise.all(Array.from({ length: 6 }, (_, i) => fromRoot.create({ target: "desktop", title: `Batch ${i}` })));
    const made = batch.filter((r) => !r.isError);
    expect(made).toHaveLength(RULES.maxLivePerSpawner);
    expect(batch.filter((r) => r.isError).map((r) => r.structuredContent.error)).toEqual(Array(6 - RULES.maxLivePerSpawner).fill("spawn_limit_reached"));
    // Each is taken by a desktop and goes idle (no prompt): no longer live, the root may start more.
    for (const r of made) await readUntil(r.structuredContent.sessionId, (read) => read.state === "idle");

    await Promise.all([fromChild, fromLevel2, fromLevel3, fromRoot].map((c) => c.close()));
  }, 60_000);

  it("stop {cascade: true} ends the whole tree, on both desktops", async () => {
    // A session with a prompt still running on B, below the root: the cascade must reach it.
    const fromRoot = await engineOf(root, 0);
    const slow = (await fromRoot.create({ target: "desktop", runner: "desk-b-runner-0001", title: "Slow on B", prompt: "SLOW work" })).structuredContent;
    await fromRoot.close();
    await readUntil(slow.sessionId, (r) => r.state === "running");
    const stopped = await ok("remote-session:stop", { sessionId: root, cascade: true });
    const tree = (await ok("remote-session:list", { limit: 50 })).sessions as Payload[];
    const below = tree.filter((s) => s.spawnedBy);
    expect(below.length).toBeGreaterThanOrEqual(1 + 2 + 1);
    expect((stopped.cascade.sessions as Payload[]).map((s) => s.sessionId).sort()).toEqual(below.map((s) => s.sessionId).sort());
    expect(stopped.cascade.sessions.find((s: Payload) => s.sessionId === slow.sessionId)).toMatchObject({ stopped: true });
    // Nothing in the tree runs any more: the running turn on B was stopped by its desktop.
    for (const session of [{ sessionId: root }, ...below]) {
      const read = await readUntil(session.sessionId, (r) => !["queued", "waking", "running", "waiting_input"].includes(r.state));
      expect(["idle", "stopped"]).toContain(read.state);
    }
    expect((await readUntil(slow.sessionId, (r) => r.state === "stopped")).state).toBe("stopped");
  }, 90_000);

  it("counts every create of the member against one rate, the engines' and the member's own", async () => {
    let refused: Payload | undefined;
    let first: string | undefined;
    for (let i = 0; i < 2 * CREATES_PER_MINUTE && !refused; i++) {
      const result = await test.execute("remote-session:create", { target: "desktop", title: `Rate ${i}` });
      if (result.isError) refused = result.structuredContent;
      first ??= result.structuredContent.sessionId as string;
    }
    expect(refused).toMatchObject({ error: "rate_limited", retryable: true });
    // The window is the member's, not the caller's: an engine's create is refused by the same count
    // (the engine of a session outside the tree the cascade above stopped).
    const engine = await engineOf(first!, 0);
    expect((await engine.create({ target: "desktop", title: "From an engine" })).structuredContent).toMatchObject({ error: "rate_limited" });
    await engine.close();
  }, 60_000);
});
