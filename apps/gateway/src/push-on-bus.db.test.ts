import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, type NatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

// Push rides the wake bus: two replicas, a stream on A, the subscription made through B (only a
// push hint from B to A starts A's watcher), a runner's event told on A's stream. Every LISTEN a
// client runs is recorded: push runs none of its own, on PostgreSQL's bus only the bus listens
// (on its own connection), and with NATS nothing listens on PostgreSQL at all.
const db = useTestDatabase();
const SECRET = "push-bus-runner-secret-0123456789abcdef";
type Replica = Awaited<ReturnType<typeof serveGateway>>;

/** A client whose LISTENs are recorded (the channel names, in order). */
function recordedClient(url: string, applicationName: string) {
  const sql = postgres(url, { max: 5, onnotice: () => {}, connection: { application_name: applicationName } });
  const listens: string[] = [];
  const listen = sql.listen.bind(sql);
  sql.listen = ((channel: string, ...rest: Parameters<typeof listen> extends [string, ...infer R] ? R : never) => {
    listens.push(channel);
    return listen(channel, ...rest);
  }) as typeof sql.listen;
  return { sql, listens };
}

const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(check()).toBe(true);
};

/** Initializes an MCP session on `replica`, returns its id. */
async function rpc(replica: Replica, token: string, body: Record<string, unknown>, mcpSessionId?: string) {
  const response = await fetch(replica.mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(mcpSessionId ? { "mcp-session-id": mcpSessionId } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
  });
  return { response, json: (await response.json()) as Record<string, any> };
}

/** The `data:` payloads of an SSE stream, one at a time; `next` gives up after `ms`. */
function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  // A read outlives the wait that gave up on it: the next wait takes it up, so no chunk is lost.
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  return {
    next: async (ms: number): Promise<unknown> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const frame = /^data: (.*)\n\n/m.exec(buffer);
        if (frame) {
          buffer = buffer.slice(frame.index + frame[0].length);
          return JSON.parse(frame[1]!);
        }
        if (Date.now() >= deadline) return undefined;
        pending ??= reader.read();
        const chunk = await Promise.race([pending, new Promise<null>((resolve) => setTimeout(() => resolve(null), Math.max(1, deadline - Date.now())))]);
        if (!chunk) continue;
        pending = undefined;
        if (chunk.done) return undefined;
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

/**
 * The push path across two replicas: a stream opens on A, the subscription is made through B, a
 * runner posts through B. Returns how long its event took to reach the stream (ms), the stream,
 * and how to post the next text of the turn.
 */
async function pushAcross(a: Replica, b: Replica, name: string) {
  const member = fixedDevMember(name);
  const mcpSessionId = (
    await rpc(b, member.mcpToken, {
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    })
  ).response.headers.get("mcp-session-id")!;
  expect(mcpSessionId).toMatch(/^mcps_/);
  const { token } = await requestRunnerToken({
    baseUrl: b.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: `${name}-desktop-0001`,
      name: "Push desktop",
      platform: "linux",
      appVersion: "test",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const runner = createRunnerClient({ baseUrl: b.baseUrl, token });
  const created = await rpc(b, member.mcpToken, {
    method: "tools/call",
    params: { name: "execute_capability", arguments: { name: "remote-session:create", body: { target: "desktop", prompt: "push me" } } },
  });
  const sessionId = created.json.result.structuredContent.sessionId as string;
  const assignment = (await runner.claimNext())!;
  await runner.postEvents(assignment.taskId, assignment.attempt, [
    { sequence: 1, type: "session.bound", payload: { localSessionId: `ses_${assignment.taskId}` } },
    { sequence: 2, type: "status", payload: { status: "running" } },
  ]);

  const stream = await fetch(a.mcpUrl, {
    headers: { authorization: `Bearer ${member.mcpToken}`, accept: "text/event-stream", "mcp-session-id": mcpSessionId },
  });
  expect(stream.status).toBe(200);
  await until(() => a.push!.stats().pushStreams === 1);
  const uri = `remote-session://${sessionId}`;
  expect((await rpc(b, member.mcpToken, { method: "resources/subscribe", params: { uri } }, mcpSessionId)).json).toMatchObject({ result: {} });
  // Only the push hint B published after the subscription committed tells A to watch it.
  await until(() => a.push!.stats().pushWatchers === 1, 3_000);

  const events = sseReader(stream);
  let sequence = 2;
  const post = (text: string) =>
    runner.postEvents(assignment.taskId, assignment.attempt, [{ sequence: ++sequence, type: "assistant.delta", payload: { messageId: "m1", text } }]);
  const updated = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } };
  const posted = Date.now();
  await post("words");
  expect(await events.next(5_000)).toEqual(updated);
  return { took: Date.now() - posted, events, post, updated };
}

const serve = (sql: postgres.Sql, members: string[], extra: { listenSql?: postgres.Sql; wakeBus?: Awaited<ReturnType<typeof connectNatsWakeBus>> }) =>
  serveGateway({ sql, port: 0, members: () => members.map((name) => fixedDevMember(name)), cloudEnabled: () => false, runnerTokenSecret: SECRET, ...extra });

describe("push on the PostgreSQL wake bus", () => {
  const clients: postgres.Sql[] = [];
  const replicas: Replica[] = [];
  afterAll(async () => {
    for (const replica of replicas) await replica.close().catch(() => {});
    for (const sql of clients) await sql.end({ timeout: 5 });
  });

  it("runs no LISTEN of its own: only the bus's channels, each on the bus's own connection", async () => {
    const pooled = [recordedClient(db.current.url, "push-pool-a"), recordedClient(db.current.url, "push-pool-b")];
    const listening = [recordedClient(db.current.url, "push-listen-a"), recordedClient(db.current.url, "push-listen-b")];
    clients.push(...[...pooled, ...listening].map((c) => c.sql));
    const a = await serve(pooled[0]!.sql, ["pushbus-pg"], { listenSql: listening[0]!.sql });
    replicas.push(a);
    const b = await serve(pooled[1]!.sql, ["pushbus-pg"], { listenSql: listening[1]!.sql });
    replicas.push(b);
    const { took, events } = await pushAcross(a, b, "pushbus-pg");
    await events.close();
    // Told by the hint, well before the streams' 5 s backstop would have found the event.
    expect(took).toBeLessThan(2_000);
    for (const client of pooled) expect(client.listens).toEqual([]);
    for (const client of listening)
      expect([...client.listens].sort()).toEqual(["openwork_desktop_revoke", "openwork_desktop_session", "openwork_desktop_wake", "openwork_push"]);
  });
});

describe.skipIf(!findNatsServer())("push on the NATS wake bus", () => {
  let nats: NatsServer;
  const clients: postgres.Sql[] = [];
  const replicas: Replica[] = [];
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close().catch(() => {});
    for (const sql of clients) await sql.end({ timeout: 5 });
    await nats?.stop();
  });

  it("carries push between replicas through NATS, with no LISTEN on PostgreSQL at all, and looks again once NATS is back", async () => {
    const pooled = [recordedClient(db.current.url, "push-nats-a"), recordedClient(db.current.url, "push-nats-b")];
    clients.push(...pooled.map((c) => c.sql));
    const a = await serve(pooled[0]!.sql, ["pushbus-nats"], { wakeBus: await connectNatsWakeBus({ servers: nats.url, publishTimeoutMs: 500 }) });
    replicas.push(a);
    const b = await serve(pooled[1]!.sql, ["pushbus-nats"], { wakeBus: await connectNatsWakeBus({ servers: nats.url, publishTimeoutMs: 500 }) });
    replicas.push(b);
    const { took, events, post, updated } = await pushAcross(a, b, "pushbus-nats");
    expect(took).toBeLessThan(2_000);
    for (const client of pooled) expect(client.listens).toEqual([]);

    // NATS goes away: the runner's next event is hinted to nobody, and nothing reaches the stream.
    const listensBefore = a.hub.stats().listens;
    await nats.kill();
    await post(" more");
    expect(await events.next(1_000)).toBeUndefined();
    // Back: the hub resyncs, A's watcher looks again (its 25 s timeout is far off) and the stream is told.
    await nats.start();
    await until(() => a.hub.stats().listens > listensBefore, 10_000);
    expect(await events.next(3_000)).toEqual(updated);
    await events.close();
    // Nor did anything else of this database: no backend's last statement is a LISTEN.
    const listening = await pooled[0]!.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen%'`;
    expect(listening[0]!.n).toBe(0);
  });
});
