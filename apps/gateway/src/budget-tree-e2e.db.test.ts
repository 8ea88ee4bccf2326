import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createOpencodeEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { CONTINUE_PROMPT } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember, userIdOf } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";
import { sessionCalls } from "./testing/session-calls.js";

// A budget over a tree of sessions on two desktops, end to end: two reference runners, each
// driving its own real opencode with the fake model (which reports its usage). The member's root
// session on desktop A holds the budget; its child on desktop B and the grandchild on desktop A
// (both spawned through their spawners' session credentials) share it. The grandchild's spend
// pauses the whole tree; the pause outlives a gateway restart; the member raises the root's
// budget from the grandchild's request, and the grandchild goes on.
const db = useTestDatabase();
const member = fixedDevMember("budget-tree");
// The grandchild works step after step (a model call every ~100 ms), so the pause finds it running.
const STEPS = 30;
const GRANDCHILD_PROMPT = `STEPS ${STEPS} PACE 100 the grandchild's work`;
const engines: RealOpencode[] = [];
const runners: Awaited<ReturnType<typeof startDesktopRunner>>[] = [];
let sql: postgres.Sql;
let gateway: Awaited<ReturnType<typeof serveGateway>>;
let client: Client;

const serve = (port: number) =>
  serveGateway({ sql, port, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: "budget-tree-runner-secret-0123456789ab" });

/** Connects the member's MCP client to the gateway now serving. */
async function connectMember() {
  client = new Client({ name: "budget-tree-member", version: "1.0.0" });
  const headers = { Authorization: `Bearer ${member.mcpToken}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers } }));
}

async function untilStreams(count: number, ms: number) {
  const deadline = Date.now() + ms;
  while (gateway.hub.stats().runnerStreams < count) {
    if (Date.now() > deadline) throw new Error(`${gateway.hub.stats().runnerStreams} of ${count} desktop runners connected`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  engines.push(...(await Promise.all([startRealOpencode(), startRealOpencode()])));
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  gateway = await serve(0);
  for (const [i, engine] of engines.entries()) {
    const id = i === 0 ? "desk-a" : "desk-b";
    runners.push(
      await startDesktopRunner({
        gatewayUrl: gateway.baseUrl,
        memberToken: member.sessionToken,
        runnerId: `${id}-budget-0001`,
        name: `Budget desktop ${id.slice(-1).toUpperCase()}`,
        engine: createOpencodeEngine({ url: engine.url, directory: engine.directory }),
      }),
    );
  }
  await untilStreams(2, 20_000);
  await connectMember();
}, 120_000);

afterAll(async () => {
  await client?.close();
  await Promise.all(runners.map((r) => r.stop()));
  await gateway?.close();
  await sql?.end({ timeout: 5 });
  await Promise.all(engines.map((e) => e.stop()));
});

type Payload = Record<string, any>;
type Result = { isError?: boolean; structuredContent: Payload };
const execute = async (name: string, body: Record<string, unknown>) =>
  (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as Result;
const { ok, readUntil } = sessionCalls(execute);

/** An MCP client speaking as the engine of `sessionId`, with the credential the gateway issues it. */
async function engineOf(sessionId: string, depth: number) {
  const { authorization } = gateway.host.sessionCredentials!.issue({
    organizationId: member.organizationId,
    userId: userIdOf(member),
    memberId: member.memberId,
    sessionId,
    depth,
  });
  const engine = new Client({ name: "engine", version: "1.0.0" });
  await engine.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers: { authorization } } }));
  return {
    create: async (body: Record<string, unknown>) =>
      (await engine.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body } })) as Result,
    close: () => engine.close(),
  };
}

describe("a budget over a tree of sessions on two desktops", () => {
  it("pauses the root's whole tree at the grandchild's spend, keeps the pause across a gateway restart, and goes on once raised", async () => {
    const root = await ok("remote-session:create", { target: "desktop", runner: "desk-a-budget-0001", title: "Root on A", budget: { tokens: 1 } });
    await readUntil(root.sessionId, (r) => r.state === "idle");
    const fromRoot = await engineOf(root.sessionId, 0);
    const child = (await fromRoot.create({ target: "desktop", runner: "desk-b-budget-0001", title: "Child on B" })).structuredContent;
    expect(child).toMatchObject({ sessionId: expect.any(String) });
    await readUntil(child.sessionId, (r) => r.state === "idle");
    const fromChild = await engineOf(child.sessionId, 1);
    const grandchild = (await fromChild.create({ target: "desktop", runner: "desk-a-budget-0001", title: "Grandchild on A", prompt: GRANDCHILD_PROMPT }))
      .structuredContent;
    expect(grandchild).toMatchObject({ sessionId: expect.any(String) });

    // The grandchild's own usage, reported by desktop A's opencode, reaches the root's budget.
    const paused = await readUntil(grandchild.sessionId, (r) => r.pending?.kind === "budget");
    expect(paused).toMatchObject({
      state: "waiting_input",
      pending: { kind: "budget", scope: "tree", budgetOf: root.sessionId, budget: { tokens: 1 } },
    });
    expect(paused.pending.spent.tokens).toBeGreaterThan(1);
    expect(engines[0]!.llmRequests.some((r) => r.lastUserText === GRANDCHILD_PROMPT)).toBe(true);

    // Nothing else runs in that tree: the root's send and the child's spawn are refused, naming the pause.
    const naming = { error: "budget_paused", sessionId: grandchild.sessionId, requestId: paused.pending.id };
    expect((await execute("remote-session:send", { sessionId: root.sessionId, prompt: "more" })).structuredContent).toMatchObject(naming);
    expect((await fromChild.create({ target: "desktop", title: "Another" })).structuredContent).toMatchObject(naming);
    expect((await ok("remote-session:read", { sessionId: root.sessionId })).remaining).toEqual({ tokens: 0 });
    await Promise.all([fromRoot.close(), fromChild.close()]);

    // The gateway restarts; the desktops reconnect by themselves; the pause is the database's.
    const port = Number(new URL(gateway.baseUrl).port);
    await client.close();
    await gateway.close();
    gateway = await serve(port);
    await untilStreams(2, 30_000);
    await connectMember();
    const afterRestart = await ok("remote-session:read", { sessionId: grandchild.sessionId });
    expect(afterRestart).toMatchObject({ state: "waiting_input", pending: { kind: "budget", id: paused.pending.id, budgetOf: root.sessionId } });
    const listed = (await ok("remote-session:list", { limit: 50 })).sessions as Payload[];
    expect(listed.find((s) => s.sessionId === grandchild.sessionId)).toMatchObject({ pausedAtBudget: { requestId: paused.pending.id, scope: "tree" } });

    // Raised from the grandchild's request: the root's budget, and the grandchild goes on.
    const raised = await ok("remote-session:respond", {
      sessionId: grandchild.sessionId,
      requestId: paused.pending.id,
      answer: { budget: { tokens: 1_000_000_000 } },
    });
    expect(raised).toMatchObject({ alreadyAnswered: false });
    const goneOn = await readUntil(grandchild.sessionId, (r) => r.state === "idle" && r.finalAssistantText !== undefined);
    expect(goneOn.pending).toBeUndefined();
    // Stopped mid-turn at the pause (far short of its steps), it went on with the plain continue prompt.
    expect(engines[0]!.llmRequests.filter((r) => r.lastUserText === GRANDCHILD_PROMPT && r.tools.length > 0).length).toBeLessThan(STEPS);
    expect(engines[0]!.llmRequests.some((r) => r.lastUserText === CONTINUE_PROMPT)).toBe(true);
    expect((await ok("remote-session:read", { sessionId: root.sessionId })).budget).toEqual({ tokens: 1_000_000_000 });
    const sent = await execute("remote-session:send", { sessionId: root.sessionId, prompt: "now within budget" });
    expect(sent.isError).toBeUndefined();
    await readUntil(root.sessionId, (r) => r.state === "idle" && r.finalAssistantText !== undefined);
  }, 180_000);
});
