import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedDevMember } from "@openwork/gateway";
import { taskAbortReason } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { listAutomationRuns } from "../fixtures/den-api/src/automations.js";
import { startKindGateway, until } from "./kind-gateway.js";
import { type ConsumerFolder, installConsumer } from "./consumer-folder.js";

// An Electron-main-shaped runner: an entry importing `@openwork/runner-protocol/client` from the
// tarballs, bundled by esbuild into one file, run alone against the reference gateway — one loop
// for the remote sessions and den-api's Automations (`automation.run`, in their own table), with
// one token and one wake stream.
const db = useTestDatabase();
const member = fixedDevMember("bundle", ["mcp:write"]);
const cleanups: (() => Promise<unknown> | unknown)[] = [];
let folder: ConsumerFolder;
let bundle: string;
let meta: { inputs: Record<string, unknown> };

beforeAll(async () => {
  // postgres too: remote-session-core's peer, which npm would otherwise resolve to the newest
  // release its cached metadata names, a tarball the offline cache may not hold.
  folder = await installConsumer(["runner-protocol", "remote-session-core"], ["zod", "postgres", "ky", "eventsource-parser", "esbuild"]);
  cleanups.push(() => folder.remove());
  const app = join(folder.dir, "app");
  await mkdir(app);
  await copyFile(new URL("../fixtures/electron-runner/main.ts", import.meta.url), join(app, "main.ts"));
  const esbuild = join(folder.dir, "node_modules", "esbuild", "bin", "esbuild");
  const args = ["app/main.ts", "--bundle", "--platform=node", "--format=esm", "--outfile=app/bundle.mjs", "--metafile=app/meta.json", "--log-level=warning"];
  await folder.node([esbuild, ...args]);
  meta = JSON.parse(await readFile(join(app, "meta.json"), "utf8"));
  // The bundle runs from a folder of its own, with no node_modules anywhere above it.
  const alone = await mkdtemp(join(tmpdir(), "openwork-bundle-"));
  cleanups.push(() => rm(alone, { recursive: true, force: true }));
  bundle = join(alone, "bundle.mjs");
  await copyFile(join(app, "bundle.mjs"), bundle);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

it("bundles the client from the installed tarball into one file without node:crypto", async () => {
  const inputs = Object.keys(meta.inputs);
  expect(inputs).toContain("node_modules/@openwork/runner-protocol/dist/client.js");
  // Only the folder's own files: nothing of the workspace was reachable.
  expect(inputs.filter((input) => !input.startsWith("node_modules/") && input !== "app/main.ts")).toEqual([]);
  const code = await readFile(bundle, "utf8");
  expect(code).not.toMatch(/node:crypto|from "crypto"|require\("crypto"\)|createHmac/);
});

// The desktop dispatch budget (p99 on loopback is 100 ms; one sample under a loaded test run gets room).
const DISPATCH_BUDGET_MS = 1_000;

// One attempt per run: a lost lease fails it at once (den-api's rule for a run's last attempt).
const startGateway = () => startKindGateway(db.current.url, [member], cleanups, { maxAttempts: 1 });

it("one loop, one token: the bundled runner takes a desktop session and an automation run, each dispatched within the budget and listed only with its own kind", async () => {
  const { sql, gateway, execute, scheduleRun } = await startGateway();
  const child = spawn(process.execPath, [bundle], {
    env: { PATH: process.env.PATH, GATEWAY_URL: gateway.baseUrl, MEMBER_SESSION_TOKEN: member.sessionToken, TASKS: "2" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await until(
    "the bundled runner never opened its wake stream",
    () => gateway.hub.stats().runnerStreams >= 1,
    () => output,
  );

  const created = await execute("remote-session:create", { target: "desktop", title: "bundle", prompt: "hello from the host" });
  expect(created.isError).toBeUndefined();
  const sessionId = String(created.structuredContent!.sessionId);
  const runId = await scheduleRun("summarise the week in five words");
  expect(await exited, output).toBe(0);
  expect(output).toContain("task remote_session.create done");
  expect(output).toContain("task automation.run done");
  // One runner, one token, one stream: the gateway saw one registration.
  expect((await sql`select runner_id from desktop_runner where member_id = ${member.memberId}`).map((r) => r.runner_id)).toEqual(["runner-electron-bundle"]);

  const read = await execute("remote-session:read", { sessionId });
  expect(read.structuredContent).toMatchObject({ sessionId, state: "idle", finalAssistantText: "bundled runner heard 4 words" });
  const [run] = await listAutomationRuns(sql, member);
  expect(run).toMatchObject({ id: runId, status: "succeeded", attempt_count: 1, result_summary: "bundled runner heard 6 words", error: null });
  const events = await sql`select type from automation_run_event where run_id = ${runId} order by sequence`;
  expect(events.map((e) => e.type)).toEqual(["status", "assistant.delta", "assistant.final", "terminal"]);

  // Each dispatched (queued → claimed) within the budget.
  const [task] = await sql`select created_at, claimed_at from desktop_task where session_id = ${sessionId}`;
  expect(task!.claimed_at.getTime() - task!.created_at.getTime()).toBeLessThan(DISPATCH_BUDGET_MS);
  expect(run!.started_at!.getTime() - run!.created_at.getTime()).toBeLessThan(DISPATCH_BUDGET_MS);

  // Each kind's listing holds its own kind only.
  expect((await listAutomationRuns(sql, member)).map((r) => r.id)).toEqual([runId]);
  const listed = await execute("remote-session:list", {});
  const ids = (listed.structuredContent!.sessions as { sessionId: string }[]).map((s) => s.sessionId);
  expect(ids).toContain(sessionId);
  expect(ids.some((id) => id.startsWith("arun_"))).toBe(false);
});

it("a lost lease is handled as each kind says: the turn is interrupted, the automation run on its last attempt fails with lease_lost, and the runner stops both", async () => {
  const env = await startGateway();
  const { sql, gateway, execute, scheduleRun } = env;
  const reasons = new Map<string, string | undefined>();
  const hold = async (taskId: string, signal: AbortSignal) => {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    reasons.set(taskId, taskAbortReason(signal));
  };
  const { ended } = await env.startDesktop(member, "runner-lease-loss", {
    concurrency: 2,
    // The runner's first heartbeat comes after the 1.5 s lease has run out and been swept.
    heartbeatIntervalMs: 4_000,
    handlers: {
      "remote_session.create": async (task, { signal }) => {
        await hold(task.taskId, signal);
        return { status: "done", localSessionId: "never" };
      },
    },
    workHandlers: {
      "automation.run": async (run, { signal }) => {
        await hold(run.taskId, signal);
        return { status: "done" };
      },
    },
  });
  await until(
    "the runner never opened its wake stream",
    () => gateway.hub.stats().runnerStreams >= 1,
    () => "",
  );
  const created = await execute("remote-session:create", { target: "desktop", title: "sleepy", prompt: "wait for me" });
  const sessionId = String(created.structuredContent!.sessionId);
  const runId = await scheduleRun("nightly report");
  await until(
    "both tasks never ended",
    () => ended.length >= 2,
    () => JSON.stringify(ended),
  );

  expect(ended.map((o) => [o.kind, o.status]).sort()).toEqual([
    ["automation.run", "lease_lost"],
    ["remote_session.create", "lease_lost"],
  ]);
  expect([...reasons.values()]).toEqual(["lease_lost", "lease_lost"]);
  const [task] = await sql`select state from desktop_task where session_id = ${sessionId}`;
  expect(task!.state).toBe("interrupted");
  expect((await listAutomationRuns(sql, member)).find((r) => r.id === runId)).toMatchObject({
    status: "failed",
    attempt_count: 1,
    error: { code: "lease_lost" },
  });
});
