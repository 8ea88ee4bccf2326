import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// The engine of a remote session reaches MCP with its session's own credential (handed to its
// runner with the turn): what it creates is recorded as spawned by that session.
const db = useTestDatabase();
const member: DevMember = fixedDevMember("spawner");
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runnerToken: string;
let active = true;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member, { members: () => [{ ...member, active }] });
  ({ token: runnerToken } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: "runner-spawner-01",
      name: "Spawner",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  }));
});
afterAll(async () => {
  await test?.close();
});

type Result = { isError?: boolean; structuredContent: Record<string, unknown> };

/** An MCP client presenting `authorization`, and execute_capability through it. */
async function mcpAs(authorization: string) {
  const client = new Client({ name: "engine", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), { requestInit: { headers: { authorization } } }));
  return {
    execute: async (name: string, body: unknown) => (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as Result,
    close: () => client.close(),
  };
}

/** Whether the MCP endpoint takes `authorization` at all. */
const mcpStatus = async (authorization: string) =>
  (
    await fetch(test.gateway.mcpUrl, {
      method: "POST",
      headers: { authorization, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    })
  ).status;

/** A desktop session the member starts, and the MCP entry its engine got with the turn. */
async function sessionWithEntry(title: string) {
  const created = await test.execute("remote-session:create", { target: "desktop", title, prompt: "split the work" });
  expect(created.isError).toBeUndefined();
  const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token: runnerToken });
  // Sessions earlier tests' engines started are queued too: claimed and left.
  let assignment = await runner.claimNext();
  while (assignment && assignment.sessionId !== created.structuredContent.sessionId) assignment = await runner.claimNext();
  if (!assignment || assignment.kind === "remote_session.respond" || !assignment.mcp) throw new Error("the turn came without its MCP entry");
  return { sessionId: String(created.structuredContent.sessionId), mcp: assignment.mcp, runner, assignment };
}

describe("session credentials on the reference gateway", () => {
  it("a create through the engine's entry is spawned by its session, and the member sees it so", async () => {
    const { sessionId, mcp } = await sessionWithEntry("Coordinator");
    expect(mcp.url).toBe(test.gateway.mcpUrl);
    const engine = await mcpAs(mcp.authorization);
    try {
      const child = await engine.execute("remote-session:create", { target: "desktop", title: "Worker", prompt: "part one" });
      expect(child.structuredContent).toMatchObject({ spawnedBy: { sessionId, title: "Coordinator" }, depth: 1 });
      const listed = await test.execute("remote-session:list", { spawnedBy: sessionId });
      expect((listed.structuredContent.sessions as { sessionId: string }[]).map((s) => s.sessionId)).toEqual([child.structuredContent.sessionId]);
      const read = await test.execute("remote-session:read", { sessionId: child.structuredContent.sessionId });
      expect(read.structuredContent.provenance).toMatch(/^started by session “Coordinator”/);
    } finally {
      await engine.close();
    }
  });

  it("never mixes credentials: a runner token is no MCP token, a session credential no runner token, a tampered one nothing", async () => {
    const { mcp } = await sessionWithEntry("Mixed");
    expect(await mcpStatus(`Bearer ${runnerToken}`)).toBe(401);
    expect(await mcpStatus(mcp.authorization)).toBe(200);
    const tampered = `${mcp.authorization.slice(0, -3)}${mcp.authorization.endsWith("AAA") ? "BBB" : "AAA"}`;
    expect(await mcpStatus(tampered)).toBe(401);
    // Shaped as a session credential, it is decided as one: never handed to the member tokens' verifier.
    expect(await mcpStatus(`Bearer owsc1.${member.mcpToken}`)).toBe(401);
    // Sent as it is (our client would not even present it): the runner routes refuse it.
    const claim = await fetch(`${test.gateway.baseUrl}/v1/desktop-runner/tasks/claim-next`, {
      method: "POST",
      headers: { authorization: mcp.authorization, "content-type": "application/json" },
      body: "{}",
    });
    expect(claim.status).toBe(401);
  });

  it("a member no longer active gets membership_required through a credential issued before", async () => {
    const { mcp } = await sessionWithEntry("Leaving");
    active = false;
    const engine = await mcpAs(mcp.authorization);
    try {
      const refused = await engine.execute("remote-session:create", { target: "desktop", title: "Too late" });
      expect(refused.structuredContent).toMatchObject({ error: "membership_required" });
    } finally {
      active = true;
      await engine.close();
    }
  });
});
