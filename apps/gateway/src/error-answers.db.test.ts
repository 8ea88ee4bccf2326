import { createServer } from "node:net";
import { postgresWakeBus, type WakeBus } from "@openwork/desktop-target";
import type { Logger } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { startWitnessWorker } from "@openwork/witness-worker";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";
import { startShards } from "./shards/start-shards.js";

const db = useTestDatabase();
const SECRET = "error-answers-runner-secret-0123456789";
const member = fixedDevMember("errors");

/** A logger that keeps its error and warn lines, to find a referenceId in them. */
function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const keep =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  const logger: Logger = { info() {}, warn: keep("warn"), error: keep("error") };
  return { logger, lines };
}

/** The token with its last character replaced by 0xE9: as long as the token as a string, one byte longer in UTF-8. */
const withE9 = (token: string) => `${token.slice(0, -1)}\u00e9`;

/** The typed body of an unexpected error, and the log line that names the same referenceId. */
async function expectTypedInternalError(response: Response, lines: ReturnType<typeof recordingLogger>["lines"], status = 500) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ error: "internal_error", retryable: true, referenceId: expect.stringMatching(/^ref_[0-9a-f]{12}$/) });
  expect(typeof body.message).toBe("string");
  const logged = lines.filter((line) => line.fields.referenceId === body.referenceId);
  expect(logged).toHaveLength(1);
  return logged[0];
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a bearer token with a non-ASCII byte", () => {
  let gateway: Awaited<ReturnType<typeof serveGateway>>;
  let sql: postgres.Sql;
  beforeAll(async () => {
    sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
    gateway = await serveGateway({ sql, port: 0, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: SECRET });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await sql?.end({ timeout: 5 });
  });

  it("is refused with 401 on the MCP endpoint, not answered 500", async () => {
    const response = await fetch(gateway.mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${withE9(member.mcpToken)}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid_token" });
  });

  it("is refused with 401 runner_unauthorized on the member and runner routes", async () => {
    const mint = await fetch(`${gateway.baseUrl}/v1/desktop-runner/token`, {
      method: "POST",
      headers: { authorization: `Bearer ${withE9(member.sessionToken)}`, "content-type": "application/json" },
      body: JSON.stringify({ runnerId: "runner-e9-test", name: "e9", platform: "linux", appVersion: "1.0.0", protocolVersion: 1 }),
    });
    expect(mint.status).toBe(401);
    expect(await mint.json()).toMatchObject({ error: "runner_unauthorized" });
    const work = await fetch(`${gateway.baseUrl}/v1/desktop-runner/work`, { headers: { authorization: `Bearer abc.d\u00e9f` } });
    expect(work.status).toBe(401);
    expect(await work.json()).toMatchObject({ error: "runner_unauthorized" });
  });

  it("is refused by the witness worker and its resolver", async () => {
    const witness = await startWitnessWorker({
      clientToken: "client-token-0123456789",
      hostToken: "host-token-0123456789",
      gatewayKey: "gateway-key-0123456789",
    });
    cleanups.push(() => witness.close());
    const workspaces = await fetch(`${witness.url}/workspaces`, { headers: { authorization: `Bearer ${withE9("client-token-0123456789")}` } });
    expect(workspaces.status).toBe(401);
    expect(await workspaces.json()).toMatchObject({ code: "unauthorized" });
    const resolve = await fetch(`${witness.resolverUrl}/v1/cloud/gateway/resolve?memberId=m`, {
      headers: { "x-openwork-gateway-key": withE9("gateway-key-0123456789") },
    });
    expect(resolve.status).toBe(404);
    expect(await resolve.json()).toMatchObject({ error: "cloud_not_found" });
  });
});

describe("the witness worker", () => {
  it("answers an unexpected error (its opencode gone) with openwork's JSON 500, its referenceId in the log line", async () => {
    const { logger, lines } = recordingLogger();
    const gone = await freePort();
    const witness = await startWitnessWorker({
      clientToken: "client-token-0123456789",
      hostToken: "host-token-0123456789",
      gatewayKey: "gateway-key-0123456789",
      opencode: { url: `http://127.0.0.1:${gone}`, directory: "/tmp" },
      logger,
    });
    cleanups.push(() => witness.close());
    const response = await fetch(`${witness.url}/workspace/ws_witness/opencode/session`, { headers: { authorization: "Bearer client-token-0123456789" } });
    expect(response.status).toBe(500);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: "internal_error", referenceId: expect.stringMatching(/^ref_[0-9a-f]{12}$/) });
    expect(lines.filter((line) => line.fields.referenceId === body.referenceId)).toEqual([
      {
        level: "error",
        message: "witness worker: request failed",
        fields: expect.objectContaining({ path: "/workspace/ws_witness/opencode/session", error: "TypeError" }),
      },
    ]);
  });
});

describe("the shard router", () => {
  it("routes a token with a non-ASCII byte to a shard that refuses it (401), and answers an unexpected error with the typed body", async () => {
    const { logger, lines } = recordingLogger();
    let members: () => readonly DevMember[] = () => [member];
    const sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
    cleanups.push(() => sql.end({ timeout: 5 }));
    const shards = await startShards({ databases: [sql], members: () => members(), runnerTokenSecret: SECRET, gateway: { logger } });
    cleanups.push(() => shards.close());
    const refused = await fetch(`${shards.router.url}/mcp/agent`, { method: "POST", headers: { authorization: `Bearer ${withE9(member.mcpToken)}` } });
    expect(refused.status).toBe(401);

    members = () => {
      throw new Error("the member directory is down");
    };
    const failed = await fetch(`${shards.router.url}/health`, { headers: { authorization: `Bearer ${member.mcpToken}` } });
    await expectTypedInternalError(failed, lines);
    expect(lines.find((line) => line.message.startsWith("shard router"))?.fields).toMatchObject({ path: "/health", error: { class: "Error" } });
  });
});

describe("an unexpected error on a gateway route", () => {
  it("is answered with the typed body whose referenceId is in the log line: MCP, push, runner routes, health and metrics", async () => {
    const { logger, lines } = recordingLogger();
    let introspection: "up" | "down" = "up";
    const sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
    const gateway = await serveGateway({
      sql,
      port: 0,
      members: () => [member],
      cloudEnabled: () => false,
      runnerTokenSecret: SECRET,
      logger,
      // A host's token introspection that fails (its OAuth server is unreachable).
      verifyMcpToken: async (token) => {
        if (introspection === "down") throw new Error("introspection endpoint unreachable");
        return token === member.mcpToken
          ? {
              token,
              clientId: member.name,
              scopes: member.scopes,
              extra: { organizationId: member.organizationId, userId: `user_${member.memberId}`, memberId: member.memberId },
            }
          : null;
      },
      push: true,
    });
    cleanups.push(() => gateway.close());
    const mcp = (headers: Record<string, string> = {}) =>
      fetch(gateway.mcpUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${member.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    expect((await mcp()).status).toBe(200);
    const unknown = await fetch(`${gateway.baseUrl}/no/such/route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "not_found", message: "no such route on this gateway", retryable: false });

    introspection = "down";
    // Found by its referenceId: the drain, on its own clock, may log between the answer and this line.
    expect(await expectTypedInternalError(await mcp(), lines)).toMatchObject({
      level: "error",
      message: "gateway mcp: request failed",
      fields: { method: "POST", path: "/mcp/agent" },
    });
    introspection = "up";

    // The database goes away: metrics, push sessions and the runner routes fail on it.
    await sql.end({ timeout: 1 });
    expect((await expectTypedInternalError(await fetch(`${gateway.baseUrl}/metrics`), lines))?.message).toBe("gateway: request failed");
    await expectTypedInternalError(await mcp({ "mcp-session-id": "mcps_gone" }), lines);
    const runner = await fetch(`${gateway.baseUrl}/v1/desktop-runner/presence`, { headers: { authorization: `Bearer ${member.sessionToken}` } });
    expect(runner.status).toBe(500);
    const runnerBody = (await runner.json()) as { error: string; referenceId: string };
    expect(runnerBody.error).toBe("internal_error");
    expect(lines.filter((line) => line.fields.referenceId === runnerBody.referenceId)).toHaveLength(1);
    for (const line of lines) expect(JSON.stringify(line)).not.toMatch(/introspection endpoint unreachable|mcp_errors_token/);
  });

  it("is a typed 503 while the gateway is still starting, not a plain-text 500", async () => {
    const port = await freePort();
    let subscribed!: () => void;
    const gate = new Promise<void>((resolve) => (subscribed = resolve));
    const sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
    cleanups.push(() => sql.end({ timeout: 5 }));
    // The usual bus, slow to listen: the port is open, the gateway not yet built.
    const bus = postgresWakeBus({ sql });
    const slowBus: WakeBus = { ...bus, name: bus.name, subscribe: async (handlers) => gate.then(() => bus.subscribe(handlers)) };
    const starting = serveGateway({ sql, port, wakeBus: slowBus, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: SECRET });
    const early = await waitForAnswer(`http://127.0.0.1:${port}/health`);
    expect(early.status).toBe(503);
    expect(await early.json()).toMatchObject({ error: "internal_error", retryable: true, retryAfterMs: 1_000, referenceId: expect.any(String) });
    subscribed();
    const gateway = await starting;
    cleanups.push(() => gateway.close());
    expect((await fetch(`${gateway.baseUrl}/health`)).status).toBe(200);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The first answer from `url`, once something listens there (the connection is refused until then). */
async function waitForAnswer(url: string): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
