// Scale-out: two gateway processes on one Postgres with runners split across them, against one
// process. Dispatch latency (create through process A, runner streaming from B: the hint crosses
// processes through NOTIFY) and claim throughput.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort } from "@openwork/embedded-postgres";
import { createRunnerClient, type RunnerClient, runRunner } from "@openwork/runner-protocol/client";
import { drainAsRunner } from "./drain-as-runner.js";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { member, mintBenchRunner, spawnGatewayProcess } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 100);
const TASKS = Number(process.env.TASKS ?? 1_000);
const db = await benchDatabase("scale_out");
const home = await mkdtemp(join(tmpdir(), "openwork-bench-scale-"));
await writeFile(
  join(home, "gateway.json"),
  JSON.stringify({ members: [member], cloudOrganizations: [], runnerTokenSecret: "bench-runner-secret-0123456789abcdef" }),
);
const children: ChildProcess[] = [];

async function startProcess(): Promise<string> {
  const port = await freePort();
  children.push(spawnGatewayProcess({ port, databaseUrl: db.url, devConfig: join(home, "gateway.json"), env: { CREATE_RATE_LIMIT_PER_MINUTE: "1000000" } }));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return url;
    } catch {
      if (i > 300) throw new Error("a gateway process did not start");
      await sleep(100);
    }
  }
}

const runnerClient = async (baseUrl: string, runnerId: string): Promise<RunnerClient> => {
  const minted = await mintBenchRunner(baseUrl, runnerId);
  return createRunnerClient({ baseUrl, token: minted.token });
};
const mcpClient = async (baseUrl: string) => {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/agent`), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }),
  );
  return client;
};

async function dispatch(createVia: string, runnerOn: string, label: string): Promise<number[]> {
  let notify: ((at: number) => void) | undefined;
  const runner = runRunner({
    client: await runnerClient(runnerOn, `bench-scale-${label}`),
    pollIntervalMs: 60_000,
    handlers: {
      "remote_session.create": async () => {
        notify?.(performance.now());
        return { status: "done", localSessionId: "ses" };
      },
    },
  });
  await sleep(1_000);
  const mcp = await mcpClient(createVia);
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES + 10; i++) {
    const held = new Promise<number>((resolve) => (notify = resolve));
    const result = (await mcp.callTool({
      name: "execute_capability",
      arguments: { name: "remote-session:create", body: { target: "desktop", runner: `bench-scale-${label}` } },
    })) as { isError?: boolean; content: { text: string }[] };
    const returned = performance.now();
    if (result.isError) throw new Error(result.content[0]?.text);
    const latency = (await held) - returned;
    if (i >= 10) samples.push(latency);
  }
  await mcp.close();
  await runner.stop();
  return samples;
}

async function throughput(urls: string[], label: string): Promise<{ perSecond: number; seconds: number }> {
  const clients = await Promise.all(Array.from({ length: 16 }, (_, i) => runnerClient(urls[i % urls.length]!, `bench-tp-${label}-${i}`)));
  const mcp = await mcpClient(urls[0]!);
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  for (let i = 0; i < TASKS; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, TASKS - i) }, () =>
        mcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body: { target: "desktop", deliverBy } } }),
      ),
    );
  }
  await mcp.close();
  const t0 = performance.now();
  const done = (await Promise.all(clients.map((client) => drainAsRunner(client)))).reduce((n, o) => n + o.done, 0);
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: Math.round(done / seconds), seconds: +seconds.toFixed(2) };
}

const rows: Record<string, Record<string, unknown>> = {};
try {
  const a = await startProcess();
  rows["dispatch, one process (create and runner on A)"] = { ...summarize(await dispatch(a, a, "one")), unit: "ms" };
  rows["throughput, one process (16 runners on A)"] = { ...(await throughput([a], "one")), unit: "tasks/s" };
  const b = await startProcess();
  rows["dispatch, two processes (create on A, runner on B)"] = { ...summarize(await dispatch(a, b, "two")), unit: "ms" };
  rows["throughput, two processes (8 runners on A, 8 on B)"] = { ...(await throughput([a, b], "two")), unit: "tasks/s" };
} finally {
  for (const child of children) child.kill("SIGINT");
  await sleep(1_500);
  await db.stop();
  await rm(home, { recursive: true, force: true });
}
await report("scale-out", db.server, rows, [
  "Gateway processes are apps/gateway (each its own pool and LISTEN connection) on one PostgreSQL; the bench process holds the MCP and runner clients.",
  "On 2 cores the second process competes with the first and with PostgreSQL for the same CPU: this shows correctness and cost of the cross-process path more than added capacity.",
]);
process.exit(0);
