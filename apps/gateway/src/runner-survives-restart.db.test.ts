import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseName } from "@openwork/mcp-capability";
import { createSessionLedger } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember, memberCall, memberContext } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

const db = useTestDatabase();
const member: DevMember = fixedDevMember("restart", ["mcp:write"]);
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

it("keeps the desktop runner working across a gateway restart", async () => {
  const sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
  const options = { sql, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: "restart-runner-secret-0123456789ab" };
  let gateway = await serveGateway({ ...options, port: 0 });
  const port = Number(new URL(gateway.baseUrl).port);
  const home = await mkdtemp(join(tmpdir(), "openwork-restart-runner-"));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const main = join(dirname(createRequire(import.meta.url).resolve("@openwork/desktop-runner/package.json")), "dist", "main.js");
  const runner: ChildProcess = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH,
      GATEWAY_URL: gateway.baseUrl,
      MEMBER_SESSION_TOKEN: member.sessionToken,
      RUNNER_NAME: "Restart Desktop",
      RUNNER_ID_FILE: join(home, "id"),
    },
    stdio: "ignore",
  });
  cleanups.push(() => runner.kill("SIGKILL"));
  const until = async (check: () => boolean | Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await until(() => gateway.hub.stats().runnerStreams === 1, 15_000);

  await gateway.close();
  gateway = await serveGateway({ ...options, port });
  cleanups.push(() => gateway.close());
  // The runner reconnects its wake stream by itself (backoff ≤ 30 s, first retries within a second or two).
  await until(() => gateway.hub.stats().runnerStreams === 1, 30_000);

  const call = memberCall(member);
  const result = await gateway.source.execute(memberContext(member), parseName("remote-session:create")!, {
    body: { target: "desktop", prompt: "after the restart" },
  });
  expect(result.isError).toBeUndefined();
  const sessionId = String(result.structuredContent!.sessionId);
  const ledger = createSessionLedger(sql);
  await until(async () => (await ledger.find(call, sessionId))?.state === "idle", 15_000);
}, 90_000);
