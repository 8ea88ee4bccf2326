import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";
import type { SessionMcpSubject } from "./session-mcp.js";

// A turn's assignment carries the MCP entry of its engine, issued for the session's owner and
// depth, so what the session's agent creates through it is recorded as spawned by the session.
const db = useTestDatabase();
const open: RunnerGateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

/** A replica whose issuer records what it was asked for, and how often it read a session's owner on its own. */
async function issuingReplica() {
  const asked: SessionMcpSubject[] = [];
  const ownerReads = { count: 0 };
  const gateway = await startRunnerGateway(db.current.url, {
    onStatement: (statement) => {
      if (/select user_id, spawn_depth from remote_session/.test(statement)) ownerReads.count++;
    },
    sessionMcp: (subject) => {
      asked.push(subject);
      return { url: "http://127.0.0.1:1/mcp/agent", authorization: `Bearer owsc1.${asked.length}`, expiresAt: new Date(Date.now() + 60_000).toISOString() };
    },
  });
  open.push(gateway);
  return { gateway, asked, ownerReads };
}

describe("the session MCP entry of a turn", () => {
  it("rides on a create's assignment, issued for the session's owner, membership and depth", async () => {
    const { gateway, asked, ownerReads } = await issuingReplica();
    const member = { organizationId: "org_mcp", memberId: `mem_mcp_${Date.now()}` };
    const client = createRunnerClient({ baseUrl: gateway.serverUrl, token: await gateway.registerRunner(member, "runner-mcp-1") });
    const call = gateway.call({ ...member, userId: "user_mcp" });
    const { sessionId } = await gateway.sessions.create(call, { title: "with an entry", prompt: "go" });
    const assignment = await client.claimNext();
    expect(assignment).toMatchObject({
      kind: "remote_session.create",
      sessionId,
      mcp: { url: "http://127.0.0.1:1/mcp/agent", authorization: "Bearer owsc1.1" },
    });
    expect(asked).toEqual([{ organizationId: member.organizationId, userId: "user_mcp", memberId: member.memberId, sessionId, depth: 0 }]);
    // The claim's own statement read the owner: no round trip of its own.
    expect(ownerReads.count).toBe(0);

    // A heartbeat that asks gets a fresh one; one that does not, none.
    expect(await client.heartbeat(assignment!.taskId, assignment!.attempt)).not.toHaveProperty("mcp");
    const refreshed = await client.heartbeat(assignment!.taskId, assignment!.attempt, undefined, { refreshMcp: true });
    expect(refreshed.mcp?.authorization).toBe("Bearer owsc1.2");
    // An attempt that no longer holds the lease gets none.
    expect(await client.heartbeat(assignment!.taskId, assignment!.attempt + 1, undefined, { refreshMcp: true })).not.toHaveProperty("mcp");
    expect(asked).toHaveLength(2);
  });

  it("is not issued for another runner's task, nor without an issuer", async () => {
    const { gateway, asked } = await issuingReplica();
    const member = { organizationId: "org_mcp", memberId: `mem_mcp_other_${Date.now()}` };
    const holder = createRunnerClient({ baseUrl: gateway.serverUrl, token: await gateway.registerRunner(member, "runner-mcp-holder") });
    await gateway.sessions.create(gateway.call(member), { title: "held", prompt: "go" });
    const assignment = await holder.claimNext();
    const other = createRunnerClient({ baseUrl: gateway.serverUrl, token: await gateway.registerRunner(member, "runner-mcp-other") });
    await expect(other.heartbeat(assignment!.taskId, assignment!.attempt, undefined, { refreshMcp: true })).rejects.toMatchObject({ status: 404 });
    expect(asked).toHaveLength(1);

    const plain = await startRunnerGateway(db.current.url);
    open.push(plain);
    const runner = createRunnerClient({ baseUrl: plain.serverUrl, token: await plain.registerRunner(member, "runner-mcp-plain") });
    await plain.sessions.create(plain.call(member), { title: "no entry", prompt: "go" });
    expect(await runner.claimNext()).not.toHaveProperty("mcp");
  });
});
