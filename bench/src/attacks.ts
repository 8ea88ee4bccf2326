// Attacks on one gateway process, each measured by another member's `list` round trips while it
// runs, beside the same member's `list` with no attack in the same run. Budget: p99 ≤ 100 ms.
import { connect, type Socket } from "node:net";
import { fixedDevMember } from "@openwork/gateway";
import { requestRunnerToken, RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member as bystander } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 200);
const STREAMS = Number(process.env.STREAMS ?? 2_000);
const SLOW = Number(process.env.SLOW_HEADERS ?? 1_000);
const DUPLICATES = Number(process.env.DUPLICATES ?? 300);
const attacker = fixedDevMember("attacker");

const db = await benchDatabase("attacks");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url, { members: () => [bystander, attacker], connectionLimits: { maxConnections: 1_500 } });
  const mcp = await fixture.mcpClient();
  const listTimes = async (during: Promise<unknown> | null) => {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      await mcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:list", body: {} } });
      samples.push(performance.now() - t0);
    }
    await during;
    return summarize(samples);
  };
  rows["no attack (baseline)"] = { ...(await listTimes(null)), unit: "ms" };

  // 1. One runner token opening thousands of wake streams (the cap keeps the newest two).
  const { token } = await requestRunnerToken({
    baseUrl: fixture.gateway.baseUrl,
    memberToken: attacker.sessionToken,
    request: { runnerId: "runner-attacker-01", name: "Attacker", platform: "linux", appVersion: "1", protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: [...RUNNER_CAPABILITIES] },
  });
  const opened: AbortController[] = [];
  const flood = (async () => {
    for (let i = 0; i < STREAMS; i++) {
      const abort = new AbortController();
      opened.push(abort);
      await fetch(`${fixture.gateway.baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal }).catch(() => {});
    }
  })();
  rows[`${STREAMS} streams from one runner token`] = { ...(await listTimes(flood)), unit: "ms", streamsKept: fixture.gateway.hub.stats().runnerStreams };
  for (const abort of opened) abort.abort();

  // 2. Connections that never finish their headers.
  const sockets: Socket[] = [];
  const port = Number(new URL(fixture.gateway.baseUrl).port);
  for (let i = 0; i < SLOW; i++) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    sockets.push(socket);
  }
  await sleep(200);
  rows[`${SLOW} slow-header connections`] = { ...(await listTimes(null)), unit: "ms" };
  for (const socket of sockets) socket.destroy();

  // 3. Duplicates waiting on one idempotent create that takes a while (a waking worker would).
  const attackerMcp = await fixture.mcpClient(attacker);
  const storm = Promise.all(
    Array.from({ length: DUPLICATES }, () =>
      attackerMcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body: { target: "desktop", deliverBy: new Date(Date.now() + 600_000).toISOString(), idempotencyKey: "storm" } } }),
    ),
  );
  rows[`${DUPLICATES} duplicate idempotent creates`] = { ...(await listTimes(storm)), unit: "ms" };
  await attackerMcp.close();
  await mcp.close();
  await fixture.close();
} finally {
  await db.stop();
}
await report("attacks", db.server, rows, [
  "Another member's remote-session:list over MCP (real HTTP, stateless endpoint), one call at a time, while each attack runs against the same gateway process.",
  "Stream cap: 2 per runner, 20 per member (newest wins); connection cap 1 500 here (default 4 096) with an immediate 503; header timeout 10 s; duplicates wait on a notification.",
  "Budget: the other member's p99 ≤ 100 ms during each attack.",
]);
process.exit(0);
