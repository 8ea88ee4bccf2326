// Idle runners: 2 000 open SSE wake streams on one gateway process. Memory per stream, Postgres
// connections held (constant in the number of runners), and the time for one enqueue to wake
// exactly the right runner among them. The gateway runs as its own process (apps/gateway).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@openwork/embedded-postgres";
import postgres from "postgres";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { member, mintBenchRunner, spawnGatewayProcess } from "./gateway-fixture.js";

const RUNNERS = Number(process.env.RUNNERS ?? 2_000);
const WAKES = Number(process.env.WAKES ?? 50);
const db = await benchDatabase("idle_runners");
const rows: Record<string, Record<string, unknown>> = {};
const home = await mkdtemp(join(tmpdir(), "openwork-bench-idle-"));
const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
await writeFile(
  join(home, "gateway.json"),
  JSON.stringify({ members: [member], cloudOrganizations: [], runnerTokenSecret: "bench-runner-secret-0123456789abcdef" }),
);
const gateway = spawnGatewayProcess({ port, databaseUrl: db.url, devConfig: join(home, "gateway.json") });
const health = async () => (await (await fetch(`${baseUrl}/health`)).json()) as { runnerStreams: number; memory: { rss: number; heapUsed: number } };
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
const connections = async () => {
  const [row] = (await sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`) as unknown as [
    { n: number },
  ];
  return row.n;
};
try {
  for (let i = 0; ; i++) {
    try {
      await health();
      break;
    } catch {
      if (i > 200) throw new Error("the gateway did not start");
      await sleep(100);
    }
  }
  const mint = (runnerId: string) => mintBenchRunner(baseUrl, runnerId);
  const ids = Array.from({ length: RUNNERS }, (_, i) => `bench-idle-${String(i).padStart(5, "0")}`);
  const tokens: string[] = [];
  for (let i = 0; i < ids.length; i += 50) tokens.push(...(await Promise.all(ids.slice(i, i + 50).map(async (id) => (await mint(id)).token))));
  await sleep(500);
  const before = await health();
  const connectionsBefore = await connections();

  // Open every stream and count what each receives.
  const received = new Map<string, { at: number; data: string }[]>();
  const controller = new AbortController();
  const open = async (runnerId: string, token: string) => {
    const response = await fetch(`${baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    received.set(runnerId, []);
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          if (value.includes("remote_session_work_available")) received.get(runnerId)!.push({ at: performance.now(), data: value });
        }
      } catch {
        // aborted at the end
      }
    })();
  };
  for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map((id, j) => open(id, tokens[i + j]!)));
  while ((await health()).runnerStreams < RUNNERS) await sleep(100);
  await sleep(1_000);
  const after = await health();
  const connectionsAfter = await connections();
  rows["gateway memory"] = {
    streams: after.runnerStreams,
    rssBeforeMiB: +(before.memory.rss / 2 ** 20).toFixed(1),
    rssAfterMiB: +(after.memory.rss / 2 ** 20).toFixed(1),
    perStreamKiB: +((after.memory.rss - before.memory.rss) / RUNNERS / 1024).toFixed(1),
    heapPerStreamKiB: +((after.memory.heapUsed - before.memory.heapUsed) / RUNNERS / 1024).toFixed(1),
  };
  rows["postgres connections of the gateway"] = { withoutStreams: connectionsBefore, with2000Streams: connectionsAfter, listenConnections: 1 };

  // One enqueue pinned to one runner among them: time until its stream hears, and nobody else.
  const latencies: number[] = [];
  let wrongRecipients = 0;
  for (let w = 0; w < WAKES; w++) {
    const runnerId = ids[Math.floor(Math.random() * ids.length)]!;
    const counts = new Map([...received].map(([id, events]) => [id, events.length]));
    const t0 = performance.now();
    const mcp = await fetch(`${baseUrl}/mcp/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${member.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: w,
        method: "tools/call",
        params: { name: "execute_capability", arguments: { name: "remote-session:create", body: { target: "desktop", runner: runnerId, title: "wake" } } },
      }),
    });
    await mcp.text();
    const sent = performance.now();
    while ((received.get(runnerId)?.length ?? 0) <= counts.get(runnerId)!) await sleep(1);
    latencies.push(received.get(runnerId)!.at(-1)!.at - sent);
    await sleep(200);
    for (const [id, events] of received) if (id !== runnerId && events.length !== counts.get(id)) wrongRecipients++;
    void t0;
  }
  rows["enqueue → the right stream hears (among 2000)"] = { ...summarize(latencies), unit: "ms", otherStreamsWoken: wrongRecipients };
  controller.abort();
} finally {
  gateway.kill("SIGINT");
  await sql.end({ timeout: 5 });
  await sleep(1_000);
  await db.stop();
  await rm(home, { recursive: true, force: true });
}
await report("idle-runners", db.server, rows, [
  `${RUNNERS} runners of one member, each with its own token and SSE stream to one gateway process (keepalive every 15 s).`,
  "Wake latency: from the create's MCP response to the hint arriving on the pinned runner's stream (NOTIFY → LISTEN → in-process fan-out).",
  "Postgres connections are counted on the bench database: the gateway's pool plus its one LISTEN connection, whatever the number of streams.",
]);
process.exit(0);
