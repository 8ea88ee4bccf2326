// Dispatch latency: execute_capability(remote-session:create, desktop) returns → the runner holds
// the claimed assignment, over real HTTP. Beside it, in the same run and Postgres: a host's own
// kind of work (den-api's Automation runs, in their own table) taken by the same runner loop, the same with
// the SSE stream off (the 60 s backstop poll), and graphile-worker's add → start.
import { automationRuns, migrateAutomations, queueAutomationRun } from "@openwork/consumers/automations";
import postgres from "postgres";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startOpenworkDesktopDouble } from "@openwork/desktop-target/testing";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { type Runner, runRunner } from "@openwork/runner-protocol/client";
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 200);
const POLL_SAMPLES = Number(process.env.POLL_SAMPLES ?? 3);
const OPENWORK_RUNNER = "openwork-bench-install";

async function measure(client: Client, runnerHeld: () => Promise<number>, samples: number, pinned: boolean, pauseMs = 0): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    // Without the stream, a runner also looks for work right after finishing a task: pause so
    // that look is over and only the backstop poll can find the next one.
    if (pauseMs) await sleep(pauseMs);
    const held = runnerHeld();
    const result = (await client.callTool({
      name: "execute_capability",
      arguments: {
        name: "remote-session:create",
        body: { target: "desktop", title: `dispatch ${i}`, ...(pinned ? {} : { deliverBy: new Date(Date.now() + 600_000).toISOString() }) },
      },
    })) as { isError?: boolean; content: { text: string }[] };
    const returnedAt = performance.now();
    if (result.isError) throw new Error(result.content[0]?.text);
    latencies.push((await held) - returnedAt);
  }
  return latencies;
}

/** Starts a runner whose handler reports when it holds an assignment. */
function startRunner(client: Awaited<ReturnType<Awaited<ReturnType<typeof benchGateway>>["runnerClient"]>>, wakeStream: boolean) {
  let notify: ((at: number) => void) | undefined;
  const runner: Runner = runRunner({
    client,
    wakeStream,
    pollIntervalMs: 60_000,
    // What the gateway answers at the mint: the runner claims with claim-next.
    gatewayProtocolVersion: RUNNER_PROTOCOL_VERSION,
    handlers: {
      "remote_session.create": async () => {
        notify?.(performance.now());
        return { status: "done", localSessionId: "ses_bench" };
      },
    },
    workHandlers: {
      "automation.run": async () => {
        notify?.(performance.now());
        return { status: "done" };
      },
    },
  });
  const next = () => new Promise<number>((resolve) => (notify = resolve));
  return { runner, next };
}

const db = await benchDatabase("dispatch");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const kindSql = postgres(db.url, { max: 5, onnotice: () => {} });
  await migrateAutomations(kindSql);
  const fixture = await benchGateway(db.url, { workKinds: [automationRuns(kindSql)] });
  const mcp = await fixture.mcpClient();

  const sse = startRunner(await fixture.runnerClient("bench-runner-sse"), true);
  while (fixture.gateway.hub.stats().runnerStreams < 1) await sleep(20);
  await measure(mcp, sse.next, 20, true); // warm-up
  rows["runner on SSE (ours)"] = { ...summarize(await measure(mcp, sse.next, SAMPLES, true)), unit: "ms" };
  // The host's kind on the same loop: the run queued in the host's table and announced → its handler starts.
  const runs: number[] = [];
  for (let i = 0; i < SAMPLES + 20; i++) {
    const held = sse.next();
    const taskId = await queueAutomationRun(kindSql, member, { name: "bench", instructions: `run ${i}` });
    await fixture.gateway.host.desktop.announceWork({ taskId, organizationId: member.organizationId, memberId: member.memberId });
    const announcedAt = performance.now();
    const latency = (await held) - announcedAt;
    if (i >= 20) runs.push(latency);
  }
  rows["host's kind (automation.run), same runner on SSE"] = { ...summarize(runs), unit: "ms" };
  await sse.runner.stop();

  const polling = startRunner(await fixture.runnerClient("bench-runner-poll"), false);
  await sleep(500); // let its first (empty) poll pass
  rows["runner polling, no SSE (60 s backstop)"] = { ...summarize(await measure(mcp, polling.next, POLL_SAMPLES, false, 1_000)), unit: "ms" };
  await polling.runner.stop();

  // An OpenWork desktop of the field: no stream for commands, a work poll every 60 s, and
  // wake() (its resume-from-sleep hook) for an immediate look. Commands pinned to it.
  let claimed: ((at: number) => void) | undefined;
  const openwork = await startOpenworkDesktopDouble({
    baseUrl: fixture.gateway.baseUrl,
    memberToken: member.sessionToken,
    runnerId: OPENWORK_RUNNER,
    pollMs: 60_000,
    drainMs: 600_000,
    onCommand: () => claimed?.(performance.now()),
  });
  const openworkClaim = () => new Promise<number>((resolve) => (claimed = resolve));
  const createForOpenwork = async (i: number) => {
    const result = (await mcp.callTool({
      name: "execute_capability",
      arguments: { name: "remote-session:create", body: { target: "desktop", title: `openwork ${i}`, runner: OPENWORK_RUNNER } },
    })) as { isError?: boolean; content: { text: string }[] };
    if (result.isError) throw new Error(result.content[0]?.text);
    return performance.now();
  };
  const woken: number[] = [];
  for (let i = 0; i < 40; i++) {
    const held = openworkClaim();
    const returnedAt = await createForOpenwork(i);
    openwork.wake();
    if (i >= 10) woken.push((await held) - returnedAt);
    else await held;
    // Let its delivery finish: a wake() during a reconcile joins it and may miss the new command.
    await sleep(300);
  }
  rows["OpenWork desktop, woken (wake() → GET work → claim)"] = { ...summarize(woken), unit: "ms" };
  const polled: number[] = [];
  for (let i = 0; i < POLL_SAMPLES; i++) {
    await sleep(300);
    const held = openworkClaim();
    const returnedAt = await createForOpenwork(100 + i);
    polled.push((await held) - returnedAt);
  }
  rows["OpenWork desktop, its 60 s work poll only"] = { ...summarize(polled), unit: "ms" };
  await openwork.stop();
  await mcp.close();
  await fixture.close();
  await kindSql.end({ timeout: 5 });

  // graphile-worker on the same Postgres: add → start of a no-op task, one at a time.
  let started: ((at: number) => void) | undefined;
  const runnerG = await run({
    connectionString: db.url,
    concurrency: 1,
    noHandleSignals: true,
    logger: new Logger(() => () => {}),
    taskList: { noop: async () => void started?.(performance.now()) },
  });
  const utils = await makeWorkerUtils({ connectionString: db.url, logger: new Logger(() => () => {}) });
  const graphile: number[] = [];
  for (let i = 0; i < SAMPLES + 20; i++) {
    const begun = new Promise<number>((resolve) => (started = resolve));
    const t0 = performance.now();
    await utils.addJob("noop", {});
    const latency = (await begun) - t0;
    if (i >= 20) graphile.push(latency);
  }
  rows["graphile-worker add → start"] = { ...summarize(graphile), unit: "ms" };
  await utils.release();
  await runnerG.stop();
} finally {
  await db.stop();
}
await report("dispatch", db.server, rows, [
  "ours: from the MCP tool result arriving at the client to the runner's handler starting (SSE hint → claim-next).",
  "host's kind: from the host's announceWork() resolving (run inserted in its own table first) to the same runner's work handler starting.",
  "OpenWork desktop (its own dialect, a double written from the wire spec): to its command claim. It has no stream for commands:",
  "  a create waits for its next 60 s poll (uniform 0–60 s, ~30 s on average) unless something calls wake() (resume from sleep).",
  "graphile-worker 0.16.6: from addJob() called to the task function starting (LISTEN/NOTIFY).",
  "Budget (docs/architecture.md, Budgets): p50 ≤ 25 ms, p99 ≤ 100 ms.",
]);
process.exit(0);
