import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { startEmbeddedPostgres } from "@openwork/test-postgres";
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import postgres from "postgres";
import { afterAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { shardOf } from "./shards/shard-router.js";
import { startShards } from "./shards/start-shards.js";
import { startCountingRunners } from "./testing/counting-runners.js";

const SECRET = "shards-runner-secret-0123456789abcdef";
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** The first dev member whose organization hashes to `shard` of two. */
function memberOfShard(shard: number): DevMember {
  for (let i = 0; ; i++) {
    const member = fixedDevMember(`shard${shard}x${i}`, ["mcp:read", "mcp:write"]);
    if (shardOf(member.organizationId, 2) === shard) return member;
  }
}

it("hashes organizations over two shards, each a gateway on its own PostgreSQL, and keeps each organization's rows on its shard", async () => {
  const members = [memberOfShard(0), memberOfShard(1)];
  // Wake hints on NATS across the two gateway processes when nats-server is installed; else each shard's own NOTIFY.
  const nats = findNatsServer() ? await startNatsServer() : null;
  if (nats) cleanups.push(() => nats.stop());
  const databases: postgres.Sql[] = [];
  for (let shard = 0; shard < 2; shard++) {
    const server = await startEmbeddedPostgres();
    cleanups.push(() => server.stop());
    const sql = postgres(server.url, { max: 10, onnotice: () => {} });
    cleanups.push(() => sql.end({ timeout: 5 }));
    databases.push(sql);
  }
  const { router, close } = await startShards({
    databases,
    members: () => members,
    runnerTokenSecret: SECRET,
    ...(nats ? { wakeBus: () => connectNatsWakeBus({ servers: nats.url }) } : {}),
  });
  cleanups.push(close);

  // Each member's runner and MCP client know only the router.
  const runs = new Map<string, number>();
  for (const member of members) {
    const runners = await startCountingRunners({
      baseUrl: router.url,
      member,
      idPrefix: `runner-${member.name}`,
      count: 1,
      pollIntervalMs: 60_000,
      workMs: 10,
      retryLimit: 2,
      backoffMaxMs: 200,
    });
    cleanups.push(runners.stop);
    const client = new Client({ name: member.name, version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${router.url}/mcp/agent`), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }),
    );
    cleanups.push(() => client.close());
    for (let i = 0; i < 5; i++) {
      const created = (await client.callTool({
        name: "execute_capability",
        arguments: { name: "remote-session:create", body: { target: "desktop", prompt: `hello ${i}` } },
      })) as {
        isError?: boolean;
        structuredContent: { sessionId: string };
      };
      expect(created.isError).toBeFalsy();
      runs.set(created.structuredContent.sessionId, 0);
    }
    // The runner's poll is a minute away: only the shard's wake-up delivers these in time.
    await eventually(() => ([...runs.keys()].every((id) => runners.runs.has(id)) ? true : undefined), 10_000).catch(() => {});
    for (const id of runs.keys()) if (runners.runs.has(id)) runs.set(id, runners.runs.get(id)!);
  }
  expect([...runs.values()]).toEqual([...runs.keys()].map(() => 1));

  // Each shard's database holds its own organization's rows, and nothing of the other's.
  for (const [shard, sql] of databases.entries()) {
    const organizations = await sql<{ organization_id: string }[]>`
      select distinct organization_id from remote_session union select distinct organization_id from desktop_task
      union select distinct organization_id from desktop_runner`;
    expect(organizations.map((row) => row.organization_id)).toEqual([members[shard]!.organizationId]);
  }
  expect(router.routed[0]).toBeGreaterThan(0);
  expect(router.routed[1]).toBeGreaterThan(0);
}, 120_000);
