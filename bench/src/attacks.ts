// Attacks on one gateway process, each measured by another member's `list` round trips while it
// holds, beside the same member's `list` with no attack in the same run (before the first flood
// and after the last). Each flood runs in a process of its own (attack-process.ts), one
// credential (or none) per flood. Budget: p99 ≤ 100 ms during each attack.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { fixedDevMember } from "@openwork/gateway";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { requestRunnerToken } from "@openwork/runner-protocol/client";
import { type FloodSpec, rawRequest } from "./attack-floods.js";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member as bystander } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 200);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 4_200);
const WAITERS = Number(process.env.WAITERS ?? 4_200);
const PUSH_STREAMS = Number(process.env.PUSH_STREAMS ?? 4_200);
const STREAMS = Number(process.env.STREAMS ?? 20_000);
// Runner-stream requests in flight at once, and whether each comes on a new connection (FRESH_STREAMS=1).
const STREAM_CONCURRENCY = Number(process.env.STREAM_CONCURRENCY ?? 64);
const FRESH_STREAMS = process.env.FRESH_STREAMS === "1";
const DUPLICATES = Number(process.env.DUPLICATES ?? 1_000);
const FRESH = 20;
// FLOODS=slow-bodies,runner-streams runs only those floods (their kinds); default all.
const ONLY = process.env.FLOODS ? new Set(process.env.FLOODS.split(",")) : null;
const attacker = fixedDevMember("attacker");

const db = await benchDatabase("attacks");
const rows: Record<string, Record<string, unknown>> = {};
try {
  // The default connection cap (4 096) and member limits: the connection floods are sized past the cap.
  const fixture = await benchGateway(db.url, { members: () => [bystander, attacker] });
  const { baseUrl } = fixture.gateway;
  const mcp = await fixture.mcpClient();
  /** SAMPLES list calls, and more until `until` (a flood's last request) if given. */
  const listTimes = async (until?: Promise<unknown>) => {
    const samples: number[] = [];
    // A flood slowed by its refusals is measured for 30 s at most.
    let over = until === undefined;
    void until?.then(() => (over = true));
    const cutoff = setTimeout(() => (over = true), 30_000);
    for (let i = 0; i < SAMPLES || !over; i++) {
      const t0 = performance.now();
      await mcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:list", body: {} } });
      samples.push(performance.now() - t0);
    }
    clearTimeout(cutoff);
    return summarize(samples);
  };
  // The bystander's new connections (not its client's kept-alive ones): how many are served.
  const freshServed = async () => {
    const times: number[] = [];
    const answers = await Promise.all(
      Array.from({ length: FRESH }, async () => {
        const t0 = performance.now();
        const answer = await rawRequest(`${baseUrl}/health`, {});
        times.push(performance.now() - t0);
        return answer;
      }),
    );
    return { freshConnectionsServed: `${answers.filter((a) => a.status === 200).length}/${FRESH}`, freshP99Ms: Math.round(summarize(times).p99) };
  };
  const settle = async () => {
    for (let i = 0; i < 200 && fixture.gateway.connections().open > 50; i++) await sleep(100);
    await sleep(500);
  };
  /** Starts a flood in its own process, lets it take hold, measures the bystander, ends it. */
  const during = async (name: string, spec: Omit<FloodSpec, "baseUrl" | "mcpToken">, holdMs: number, wholeFlood = false) => {
    if (ONLY && !ONLY.has(spec.kind)) return;
    const child = fork(fileURLToPath(new URL("./attack-process.ts", import.meta.url)), { execArgv: ["--import", "tsx"] });
    const heard = (key: string) =>
      new Promise<Record<string, unknown>>((resolve) => child.on("message", (m: Record<string, unknown>) => key in m && resolve(m)));
    const [started, finished, stopped] = [heard("started"), heard("finished"), heard("facts")];
    child.send({ baseUrl, mcpToken: attacker.mcpToken, ...spec });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    await started;
    await sleep(holdMs);
    const list = await listTimes(wholeFlood ? finished : undefined);
    const fresh = await freshServed();
    const { open } = fixture.gateway.connections();
    const held = {
      open,
      waitingReads: fixture.gateway.source.waitingReads(),
      runnerStreams: fixture.gateway.hub.stats().runnerStreams,
      pushStreams: fixture.gateway.push?.stats().pushStreams,
    };
    child.send("stop");
    const { facts } = (await stopped) as { facts: Record<string, unknown> };
    clearInterval(sampler);
    await settle();
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    rows[name] = { ...list, unit: "ms", ...fresh, ...facts, ...held, peakRssMb: mb(peakRss), rssAfterMb: mb(process.memoryUsage().rss) };
  };

  rows["no attack (baseline)"] = { ...(await listTimes()), unit: "ms", ...(await freshServed()), rssMb: Math.round(process.memoryUsage().rss / 1024 / 1024) };

  // Bodies nobody is allowed to send: to an answer link's page (no link needed), read up to their limit only.
  await during(
    "1 chunked body of 256 MB to an answer page, no credential",
    { kind: "big-bodies", count: 1, bodyMb: 256, path: "/notify/answer/not-a-link" },
    0,
    true,
  );
  await during("6 chunked bodies of 400 MB at once, no credential", { kind: "big-bodies", count: 6, bodyMb: 400, path: "/notify/answer/not-a-link" }, 0, true);

  await during(`${CONNECTIONS} idle sockets`, { kind: "idle-sockets", count: CONNECTIONS }, 2_000);
  await during(`${CONNECTIONS} slow-header connections`, { kind: "slow-headers", count: CONNECTIONS }, 2_000);
  await during(`${CONNECTIONS} slow bodies with a valid token`, { kind: "slow-bodies", count: CONNECTIONS }, 2_000);

  // The attacker's own queued session to wait on (store-and-forward: no runner needed).
  const created = await rawRequest(`${baseUrl}/mcp/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${attacker.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "execute_capability",
        arguments: { name: "remote-session:create", body: { target: "desktop", deliverBy: new Date(Date.now() + 600_000).toISOString(), prompt: "wait" } },
      },
    }),
  });
  const sessionId = /"sessionId":"(rs_[0-9a-z]+)"/.exec(created.body)?.[1];
  await during(`${WAITERS} waiting reads (waitMs 25 000), one token`, { kind: "waiting-reads", count: WAITERS, ...(sessionId ? { sessionId } : {}) }, 2_000);
  await during(`${PUSH_STREAMS} push streams (initialize + GET), one token`, { kind: "push-streams", count: PUSH_STREAMS, concurrency: 500 }, 2_000);

  const { token } = await requestRunnerToken({
    baseUrl,
    memberToken: attacker.sessionToken,
    request: {
      runnerId: "runner-attacker-01",
      name: "Attacker",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  await during(
    `${STREAMS} runner-stream requests, one runner token, ${STREAM_CONCURRENCY} at a time${FRESH_STREAMS ? " on new connections" : ""}`,
    { kind: "runner-streams", count: STREAMS, concurrency: STREAM_CONCURRENCY, runnerToken: token, fresh: FRESH_STREAMS },
    300,
    true,
  );
  await during(`${DUPLICATES} duplicate idempotent creates`, { kind: "duplicate-creates", count: DUPLICATES }, 0, true);

  rows["no attack (after)"] = { ...(await listTimes()), unit: "ms", ...(await freshServed()) };
  await mcp.close();
  await fixture.close();
} finally {
  await db.stop();
}
await report("attacks", db.server, rows, [
  "Another member's remote-session:list over MCP (real HTTP, its client's kept-alive connection), one call at a time, while each flood (from a process of its own) holds against the same gateway process; freshConnectionsServed: 20 new connections of that member to /health at the end of the flood's window.",
  `Default limits: 4 096 connections (at the cap a new connection takes the slot of one with no whole request yet, else of the credential holding the most past 512), header timeout 10 s, member limits (16 waiting reads, 16 push streams, 64 MCP sessions, initializes 32 + 2/s, runner-stream opens 8 + 1/s per token). Sizes: CONNECTIONS ${CONNECTIONS}, WAITERS ${WAITERS}, PUSH_STREAMS ${PUSH_STREAMS} (500 at a time), STREAMS ${STREAMS} (STREAM_CONCURRENCY ${STREAM_CONCURRENCY} at a time), DUPLICATES ${DUPLICATES}.`,
  "Budget: the other member's p99 ≤ 100 ms during each attack.",
]);
process.exit(0);
