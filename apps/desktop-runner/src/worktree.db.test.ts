import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { createDesktopChannel, type DesktopChannel, migrateDesktopTarget } from "@openwork/desktop-target";
import { createSessionLedger, type LedgerSession, newReferenceId } from "@openwork/remote-session-core";
import { type TargetSessions, targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEchoEngine } from "./echo-engine.js";
import type { LocalEngine } from "./local-engine.js";
import { startDesktopRunner } from "./start-desktop-runner.js";

// The reference runner against a real desktop target (PostgreSQL, HTTP on 127.0.0.1): it reports
// the workspaces it serves at start, and runs a `worktree: true` create in a new git worktree of
// the workspace, named after the session, which is still there afterwards.
const git = promisify(execFile);
const db = useTestDatabase();
const member = { organizationId: "org_runner_wt", memberId: "mem_runner_wt" };
const call = () => ({ ...member, userId: "user_runner_wt", referenceId: newReferenceId() });
let sql: Sql;
let channel: DesktopChannel;
let server: ReturnType<typeof serve>;
let sessions: TargetSessions;
let root: string;
let repo: string;
const directories: (string | null)[] = [];
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;

/** The echo engine, telling which folder each session was made in. */
function recordingEngine(): LocalEngine {
  const echo = createEchoEngine();
  return { ...echo, createSession: async (input) => (directories.push(input.directory), echo.createSession(input)) };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "openwork-worktree-"));
  repo = join(root, "repo");
  await git("git", ["init", "-q", "-b", "main", repo]);
  await writeFile(join(repo, "README.md"), "a repository for the worktree test\n");
  await git("git", ["-C", repo, "add", "README.md"]);
  await git("git", ["-C", repo, "-c", "user.name=Test", "-c", "user.email=test@example.test", "commit", "-q", "-m", "first"]);

  sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
  await migrateDesktopTarget(sql);
  // Listening first: the channel's routes need the base URL (the token audience).
  server = serve({ fetch: (request: Request) => channel.routes.fetch(request), port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  channel = createDesktopChannel({
    sql,
    timings: { heartbeatIntervalMs: 200 },
    routes: {
      secret: "desktop-runner-worktree-test-secret-0123",
      baseUrl,
      authenticateMember: async (request) => (request.headers.get("authorization") === "Bearer member-token-worktree-0001" ? member : null),
      isActiveMember: async () => true,
    },
    sweeper: false,
  });
  await channel.start();
  sessions = targetSessions(channel.target, createSessionLedger(sql));
  runner = await startDesktopRunner({
    gatewayUrl: baseUrl,
    memberToken: "member-token-worktree-0001",
    runnerId: "runner-worktree-0001",
    name: "Worktree box",
    engine: recordingEngine(),
    workspaces: [{ workspaceId: "ws_repo", name: "repo", directory: repo }],
    pollIntervalMs: 500,
  });
});

afterAll(async () => {
  await runner?.stop();
  (server as unknown as import("node:http").Server).closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await channel?.close();
  await sql?.end({ timeout: 5 });
  await rm(root, { recursive: true, force: true });
});

const find = async (id: string) => (await createSessionLedger(sql).find(call(), id)) as LedgerSession;

it("reports the workspaces it serves at start, with its engine", async () => {
  await expect
    .poll(async () => ((await channel.target.availability(call())).fields as { machines: unknown[] }).machines, { timeout: 10_000 })
    .toEqual([
      expect.objectContaining({
        computerId: "runner-worktree-0001",
        workspaces: [expect.objectContaining({ workspaceId: "ws_repo", name: "repo", active: true, engine: "echo" })],
        engines: ["echo"],
      }),
    ]);
});

it("runs a worktree create in a new git worktree named after the session, and leaves it", async () => {
  const created = await sessions.create(call(), { title: "Fix the flaky test", prompt: "hello from the worktree", workspace: "repo", worktree: true });
  await expect
    .poll(async () => (await sessions.read(call(), await find(created.sessionId), { limit: 10, waitMs: 0 })).finalAssistantText, { timeout: 15_000 })
    .toBe("echo: hello from the worktree");
  const { stdout } = await git("git", ["-C", repo, "worktree", "list", "--porcelain"]);
  const worktrees = stdout
    .split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));
  const made = worktrees.find((path) => path.endsWith(`fix-the-flaky-test-${created.sessionId}`));
  expect(made, stdout).toBeDefined();
  expect(stdout).toContain(`branch refs/heads/openwork/fix-the-flaky-test-${created.sessionId}`);
  // The session was made there, and the worktree stays for the human.
  expect(directories.at(-1)).toBe(made);
  expect((await stat(join(made!, "README.md"))).isFile()).toBe(true);
  await runner.stop();
  expect((await stat(made!)).isDirectory()).toBe(true);
});
