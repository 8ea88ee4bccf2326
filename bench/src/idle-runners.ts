// Idle runners: 2 000 open SSE wake streams on one gateway process. Memory per stream, Postgres
// connections held (constant in the number of runners), and the time for one enqueue to wake
// exactly the right runner among them. The gateway runs as its own process (apps/gateway). One
// process holds 20 wake streams of a member, so the runners are spread over members (PER_MEMBER,
// default 10, each member its own tokens in the dev config); every wait is bounded and fails loudly.
import { setMaxListeners } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@openwork/embedded-postgres";
import postgres from "postgres";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { BENCH_RUNNER_SECRET, benchMember, mintBenchRunner, spawnGatewayProcess } from "./gateway-fixture.js";

const RUNNERS = Number(process.env.RUNNERS ?? 2_000);
const WAKES = Number(process.env.WAKES ?? 50);
const PER_MEMBER = Number(process.env.PER_MEMBER ?? 10);
const OPEN_TIMEOUT_S = Number(process.env.OPEN_TIMEOUT_S ?? 120);
const WAKE_TIMEOUT_MS = 10_000;
if (PER_MEMBER < 1 || PER_MEMBER > 20) throw new Error("PER_MEMBER must be 1–20: one gateway process holds 20 wake streams of a member");
const members = Array.from({ length: Math.ceil(RUNNERS / PER_MEMBER) }, (_, i) => benchMember(i));
const ownerOf = (runner: number) => members[Math.floor(runner / PER_MEMBER)]!;
const db = await benchDatabase("idle_runners");
const rows: Record<string, Record<string, unknown>> = {};
const home = await mkdtemp(join(tmpdir(), "openwork-bench-idle-"));
const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
await writeFile(join(home, "gateway.json"), JSON.stringify({ members, cloudOrganizations: [], runnerTokenSecret: BENCH_RUNNER_SECRET }));
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
  const ids = Array.from({ length: RUNNERS }, (_, i) => `bench-idle-${String(i).padStart(5, "0")}`);
  const tokens: string[] = [];
  for (let i = 0; i < ids.length; i += 50) {
    tokens.push(...(await Promise.all(ids.slice(i, i + 50).map(async (id, j) => (await mintBenchRunner(baseUrl, id, ownerOf(i + j))).token))));
  }
  await sleep(500);
  const before = await health();
  const connectionsBefore = await connections();

  // Open every stream and count what each receives.
  const received = new Map<string, { at: number; data: string }[]>();
  const controller = new AbortController();
  // One signal ends every stream: it is listened to once per stream, on purpose.
  setMaxListeners(RUNNERS + 100, controller.signal);
  // An open the gateway refuses (503 past its stream budget or open rate, 429 past a member's or token's rate) is retried after what it asks.
  let refusedOpens = 0;
  const open = async (runnerId: string, token: string) => {
    let response: Response;
    for (let attempt = 0; ; attempt++) {
      response = await fetch(`${baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
      if (response.ok) break;
      const body = (await response.json().catch(() => ({}))) as { retryAfterMs?: number };
      if ((response.status !== 503 && response.status !== 429) || attempt >= 20) {
        throw new Error(`the stream of ${runnerId} was refused (attempt ${attempt + 1}): HTTP ${response.status} ${JSON.stringify(body)}`);
      }
      refusedOpens++;
      await sleep(body.retryAfterMs ?? Number(response.headers.get("retry-after") ?? 1) * 1_000);
    }
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
  const opening = performance.now();
  for (;;) {
    const { runnerStreams } = await health();
    if (runnerStreams >= RUNNERS) break;
    if (performance.now() - opening > OPEN_TIMEOUT_S * 1_000) {
      throw new Error(`only ${runnerStreams} of ${RUNNERS} wake streams open after OPEN_TIMEOUT_S = ${OPEN_TIMEOUT_S} s`);
    }
    await sleep(100);
  }
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
  rows["postgres connections of the gateway"] = { withoutStreams: connectionsBefore, withStreams: connectionsAfter, listenConnections: 1, refusedOpens };

  // One enqueue pinned to one runner among them: time until its stream hears, and nobody else.
  const latencies: number[] = [];
  let wrongRecipients = 0;
  for (let w = 0; w < WAKES; w++) {
    const index = Math.floor(Math.random() * ids.length);
    const runnerId = ids[index]!;
    const counts = new Map([...received].map(([id, events]) => [id, events.length]));
    const mcp = await fetch(`${baseUrl}/mcp/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${ownerOf(index).mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: w,
        method: "tools/call",
        params: { name: "execute_capability", arguments: { name: "remote-session:create", body: { target: "desktop", runner: runnerId, title: "wake" } } },
      }),
    });
    const answer = await mcp.text();
    const sent = performance.now();
    if (!mcp.ok || answer.includes('"isError":true')) throw new Error(`the create for ${runnerId} failed: HTTP ${mcp.status} ${answer.slice(0, 300)}`);
    while ((received.get(runnerId)?.length ?? 0) <= counts.get(runnerId)!) {
      if (performance.now() - sent > WAKE_TIMEOUT_MS) throw new Error(`the stream of ${runnerId} heard no hint ${WAKE_TIMEOUT_MS} ms after its create`);
      await sleep(1);
    }
    latencies.push(received.get(runnerId)!.at(-1)!.at - sent);
    await sleep(200);
    for (const [id, events] of received) if (id !== runnerId && events.length !== counts.get(id)) wrongRecipients++;
  }
  rows[`enqueue → the right stream hears (among ${RUNNERS})`] = { ...summarize(latencies), unit: "ms", otherStreamsWoken: wrongRecipients };
  controller.abort();
} finally {
  gateway.kill("SIGINT");
  await sql.end({ timeout: 5 });
  await sleep(1_000);
  await db.stop();
  await rm(home, { recursive: true, force: true });
}
await report("idle-runners", db.server, rows, [
  `${RUNNERS} runners of ${members.length} members (${PER_MEMBER} each: one process holds 20 wake streams of a member), each with its own token and SSE stream to one gateway process (keepalive every 15 s); opens the gateway refused (503/429) were retried after its retryAfterMs.`,
  "Wake latency: from the create's MCP response (its body read) to the hint arriving on the pinned runner's stream (NOTIFY → LISTEN → in-process fan-out); below 0 when the hint came before the body was read.",
  "Postgres connections are counted on the bench database: the gateway's pool plus its one LISTEN connection, whatever the number of streams.",
]);
process.exit(0);
