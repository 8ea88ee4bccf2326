// Two shards on one machine: organizations hashed by the shard router over gateways that each have
// their own PostgreSQL (wake hints on NATS when nats-server is installed), beside one shard behind
// the same router, same run. Throughput: turns (create over MCP → claim-next → complete, no events)
// with members in both shards; dispatch: create returned → the runner's handler starts (SSE wake).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type DevMember, fixedDevMember, shardOf, startShards } from "@openwork/gateway";
import { createRunnerClient, runRunner } from "@openwork/runner-protocol/client";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import postgres from "postgres";
import { mintBenchRunner } from "./gateway-fixture.js";
import { benchDatabase, report, sleep, summarize } from "./harness.js";

const TURNS = Number(process.env.TURNS ?? 600);
const LOOPS = Number(process.env.LOOPS ?? 8);
const SAMPLES = Number(process.env.SAMPLES ?? 100);
const SECRET = "bench-shards-secret-0123456789abcdef";
const rows: Record<string, Record<string, unknown>> = {};

function memberOfShard(shard: number, of: number): DevMember {
  for (let i = 0; ; i++) {
    const member = fixedDevMember(`bench${shard}x${i}`, ["mcp:read", "mcp:write"]);
    if (shardOf(member.organizationId, of) === shard) return member;
  }
}

async function deployment(shards: number, natsUrl: string | null) {
  const members = [memberOfShard(0, 2), memberOfShard(1, 2)];
  const databases = await Promise.all(Array.from({ length: shards }, (_, shard) => benchDatabase(`shards_${shards}_${shard}`)));
  const clients = databases.map((db) => postgres(db.url, { max: 20, onnotice: () => {} }));
  const { router, close } = await startShards({
    databases: clients,
    members: () => members,
    runnerTokenSecret: SECRET,
    gateway: { createRateLimit: { bucket: "create", limit: 1_000_000, windowMs: 60_000 } },
    ...(natsUrl ? { wakeBus: () => connectNatsWakeBus({ servers: natsUrl }) } : {}),
  });
  const closers: (() => Promise<unknown>)[] = [close, ...clients.map((sql) => () => sql.end({ timeout: 5 })), ...databases.map((db) => db.stop)];
  const server = databases[0]!.server;
  const runnerClient = async (member: DevMember, runnerId: string) => {
    const minted = await mintBenchRunner(router.url, runnerId, member);
    return createRunnerClient({ baseUrl: router.url, token: minted.token });
  };
  const mcp = async (member: DevMember) => {
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${router.url}/mcp/agent`), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }),
    );
    closers.unshift(() => client.close());
    return client;
  };
  return {
    members,
    server,
    router,
    runnerClient,
    mcp,
    close: async () => {
      for (const step of closers) await step().catch(() => {});
    },
  };
}

const create = async (client: Client, body: Record<string, unknown>) => {
  const result = (await client.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body } })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  if (result.isError) throw new Error(result.content[0]?.text);
};

const nats = findNatsServer() ? await startNatsServer() : null;
let server = "";
for (const shards of [1, 2]) {
  const d = await deployment(shards, nats?.url ?? null);
  server = d.server;
  const label = `${shards} shard${shards > 1 ? "s" : ""}`;
  // Throughput: LOOPS loops per member, each create → claim-next → complete (store-and-forward, so any runner takes it).
  const deliverBy = () => new Date(Date.now() + 600_000).toISOString();
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    d.members.flatMap((member, m) =>
      Array.from({ length: LOOPS }, async (_, i) => {
        const client = await d.mcp(member);
        const runner = await d.runnerClient(member, `bench-shards-${m}-${String(i).padStart(2, "0")}`);
        while (started < TURNS) {
          started++;
          await create(client, { target: "desktop", prompt: "turn", deliverBy: deliverBy() });
          const task = await runner.claimNext();
          if (task) await runner.complete(task.taskId, { attempt: task.attempt, status: "done", localSessionId: `ses_${task.taskId}` });
        }
      }),
    ),
  );
  rows[`${label}: turns/s (members in both shards)`] = {
    turns: TURNS,
    perSecond: +(TURNS / ((performance.now() - t0) / 1000)).toFixed(1),
    routed: d.router.routed.join(" / "),
  };

  // Dispatch: one runner of each member on its SSE stream, creates alternating between members.
  const latencies: number[] = [];
  const waiters = new Map<string, (at: number) => void>();
  const runners = await Promise.all(
    d.members.map(async (member, m) =>
      runRunner({
        client: await d.runnerClient(member, `bench-shards-sse-${m}`),
        pollIntervalMs: 60_000,
        gatewayProtocolVersion: RUNNER_PROTOCOL_VERSION,
        handlers: {
          "remote_session.create": async () => {
            waiters.get(member.name)?.(performance.now());
            return { status: "done", localSessionId: "ses_bench" };
          },
        },
      }),
    ),
  );
  await sleep(1_000);
  const clients = await Promise.all(d.members.map((member) => d.mcp(member)));
  for (let i = 0; i < SAMPLES + 10; i++) {
    const m = i % 2;
    const held = new Promise<number>((resolve) => waiters.set(d.members[m]!.name, resolve));
    await create(clients[m]!, { target: "desktop", title: `dispatch ${i}`, runner: `bench-shards-sse-${m}` });
    const returnedAt = performance.now();
    const at = await held;
    if (i >= 10) latencies.push(at - returnedAt);
  }
  rows[`${label}: dispatch`] = { ...summarize(latencies), unit: "ms" };
  await Promise.all(runners.map((runner) => runner.stop()));
  await d.close();
}
await nats?.stop();
await report("shards", server, rows, [
  `Two members, one per shard of two (the same two on the one shard). Throughput: ${TURNS} turns, ${LOOPS} loops per member over HTTP through the shard router (MCP create, claim-next, complete). Dispatch: ${SAMPLES} creates alternating between the members, each pinned to the member's runner on its SSE stream. Wake hints ${nats ? "on NATS" : "on each shard's NOTIFY (nats-server not installed)"}. Everything — router, gateways, PostgreSQL servers, runners, nats-server — shares the machine's cores.`,
]);
process.exit(0);
