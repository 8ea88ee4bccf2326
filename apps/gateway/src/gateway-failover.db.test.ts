import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createDesktopTarget, createWakeHub } from "@openwork/desktop-target";
import { freePort } from "@openwork/embedded-postgres";
import { createSessionLedger } from "@openwork/remote-session-core";
import { targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember, memberCall } from "./dev-members.js";
import { startCountingRunners } from "./testing/counting-runners.js";

const db = useTestDatabase();
const member: DevMember = fixedDevMember("failover", ["mcp:write"]);
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
});

/** A load balancer in front of the replicas: it sends everything to the first one that answers. */
async function startBalancer(upstreams: string[]): Promise<{ url: string; server: Server }> {
  let current = 0;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    for (let tries = 0; tries < upstreams.length; tries++) {
      try {
        const upstream = await fetch(`${upstreams[current]}${request.url}`, {
          method: request.method,
          headers: Object.fromEntries(
            Object.entries(request.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)) as [string, string][],
          ),
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        response.writeHead(upstream.status, Object.fromEntries(upstream.headers));
        if (upstream.body)
          Readable.fromWeb(upstream.body as never)
            .on("error", () => response.destroy())
            .pipe(response);
        else response.end();
        return;
      } catch {
        current = (current + 1) % upstreams.length;
      }
    }
    response.writeHead(502).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

it("loses and duplicates nothing when a gateway process is killed while runners claim", async () => {
  const home = await mkdtemp(join(tmpdir(), "openwork-failover-"));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  await writeFile(
    join(home, "gateway.json"),
    JSON.stringify({ members: [member], cloudOrganizations: [], runnerTokenSecret: "failover-runner-secret-0123456789" }),
  );
  const ports = [await freePort(), await freePort()];
  const balancer = await startBalancer(ports.map((p) => `http://127.0.0.1:${p}`));
  cleanups.push(() => new Promise((resolve) => (balancer.server.closeAllConnections(), balancer.server.close(resolve))));
  const replicas: ChildProcess[] = ports.map((port) =>
    spawn(process.execPath, [new URL("../dist/main.js", import.meta.url).pathname], {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        PUBLIC_URL: balancer.url,
        DATABASE_URL: db.current.url,
        DEV_CONFIG: join(home, "gateway.json"),
        START_RUNNER: "0",
        CLOUD_RESOLVER_URL: "http://127.0.0.1:9",
        CLOUD_GATEWAY_KEY: "none",
      },
      stdio: "ignore",
    }),
  );
  cleanups.push(() => {
    for (const replica of replicas) replica.kill("SIGKILL");
  });
  for (const port of ports) {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
      } catch {
        if (i > 300) throw new Error("a replica did not start");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  const sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
  const hub = createWakeHub({ sql });
  await hub.ready;
  cleanups.push(() => hub.close());
  const target = targetSessions(createDesktopTarget({ sql, hub }), createSessionLedger(sql));
  const { runs, stop } = await startCountingRunners({
    baseUrl: balancer.url,
    member,
    idPrefix: "runner-failover",
    count: 4,
    pollIntervalMs: 1_000,
    workMs: 30,
    retryLimit: 4,
    backoffMaxMs: 400,
  });
  cleanups.push(stop);

  const deliverBy = new Date(Date.now() + 600_000).toISOString();
  const sessions: string[] = [];
  for (let i = 0; i < 150; i++) sessions.push((await target.create(memberCall(member), { title: `t${i}`, deliverBy })).sessionId);
  // Kill the replica serving the runners while they are in the middle of the work.
  while (runs.size < 30) await new Promise((resolve) => setTimeout(resolve, 10));
  replicas[0]!.kill("SIGKILL");

  const deadline = Date.now() + 60_000;
  for (;;) {
    const [row] = await sql<
      { done: number }[]
    >`select count(*) filter (where state = 'done')::int as done from desktop_task where member_id = ${member.memberId}`;
    if (row!.done === sessions.length) break;
    if (Date.now() > deadline) throw new Error(`only ${row!.done} of ${sessions.length} tasks done after the failover`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(sessions.every((id) => runs.get(id) === 1)).toBe(true);
  const attempts = await sql<
    { attempt: number; n: number }[]
  >`select attempt, count(*)::int as n from desktop_task where member_id = ${member.memberId} group by attempt`;
  expect(attempts).toEqual([{ attempt: 1, n: 150 }]);
}, 120_000);
