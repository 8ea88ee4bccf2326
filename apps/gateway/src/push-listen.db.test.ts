import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { RunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";
import { desktopVia, type Replica, sseMessages } from "./testing/push-replicas.js";

// Push in MCP 2026-07-28: `subscriptions/listen` on two gateway replicas sharing one PostgreSQL.
// A change seen by either replica reaches a listener on the other (hints on the wake hub); a
// listener whose replica went away listens again elsewhere, naming the versions it last read.
const db = useTestDatabase();
const alice = fixedDevMember("listen-alice");
const bob = fixedDevMember("listen-bob");
const VERSION = "io.openwork/sessionVersion";
let sql: postgres.Sql;
let a: Replica;
let b: Replica;
let runnerViaA: RunnerClient;
let runnerViaB: RunnerClient;

const serve = () =>
  serveGateway({ sql, port: 0, members: () => [alice, bob], cloudEnabled: () => false, runnerTokenSecret: "listen-runner-secret-0123456789abcdef" });

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  a = await serve();
  b = await serve();
  runnerViaA = await desktopVia(a, alice, "listen-desktop-0001");
  runnerViaB = await desktopVia(b, alice, "listen-desktop-0001");
}, 60_000);

afterAll(async () => {
  await a?.close().catch(() => {});
  await b?.close();
  await sql?.end({ timeout: 5 });
});

/** The v2 client pinned to 2026-07-28 as `who` on `replica`. */
async function modernClient(replica: Replica, who: DevMember): Promise<Client> {
  const client = new Client({ name: "listen-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(replica.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${who.mcpToken}` } } }));
  return client;
}

/** A desktop session of Alice's whose turn the runner holds, bound and running. */
async function runningSession(client: Client): Promise<{ sessionId: string; taskId: string; attempt: number; uri: string }> {
  const created = (await client.callTool({
    name: "execute_capability",
    arguments: { name: "remote-session:create", body: { target: "desktop", prompt: "tell me when it moves" } },
  })) as { structuredContent: { sessionId: string } };
  const assignment = await runnerViaA.claimNext();
  await runnerViaA.postEvents(assignment!.taskId, assignment!.attempt, [
    { sequence: 1, type: "session.bound", payload: { localSessionId: `ses_${assignment!.taskId}` } },
    { sequence: 2, type: "status", payload: { status: "running" } },
  ]);
  const { sessionId } = created.structuredContent;
  return { sessionId, taskId: assignment!.taskId, attempt: assignment!.attempt, uri: `remote-session://${sessionId}` };
}

/** The version of a session as its resource reads now. */
async function versionOf(client: Client, uri: string): Promise<string> {
  const read = await client.readResource({ uri });
  return String((read.contents[0] as { _meta?: Record<string, unknown> })._meta?.[VERSION]);
}

/** A raw 2026-07-28 `subscriptions/listen`, as a client without an SDK sends it; `since` names the versions last read. */
function rawListen(replica: Replica, who: DevMember, uris: string[], since?: Record<string, string>, signal?: AbortSignal) {
  return fetch(replica.mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${who.mcpToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "listen-raw",
      method: "subscriptions/listen",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
          ...(since ? { "io.openwork/sessionVersions": since } : {}),
        },
        notifications: { resourceSubscriptions: uris },
      },
    }),
    ...(signal ? { signal } : {}),
  });
}

/** The JSON-RPC messages of a listen's stream until `until` says stop or `timeoutMs` passes. */
const messages = async (response: Response, until: (seen: any[]) => boolean, timeoutMs: number): Promise<any[]> =>
  (await sseMessages(response, (seen) => until(seen.map((m) => m.data)), timeoutMs)).map((m) => m.data);

const until = (deadline: number, done: () => boolean) =>
  (async () => {
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  })();

describe("push over subscriptions/listen (MCP 2026-07-28)", () => {
  it("acknowledges the listen, then tells the SDK client of each change from the other replica, with the version to resume from", async () => {
    const client = await modernClient(a, alice);
    try {
      expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
      const { uri, taskId, attempt } = await runningSession(client);
      const updates: { uri: string; meta: Record<string, unknown>; at: number }[] = [];
      client.setNotificationHandler("notifications/resources/updated", (notification) => {
        updates.push({ uri: notification.params.uri, meta: notification.params._meta ?? {}, at: Date.now() });
      });
      const subscription = await client.listen({ resourceSubscriptions: [uri] });
      expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uri] });
      expect(a.push!.stats().pushStreams).toBe(1);

      // The runner reaches replica B; the listener is on A.
      const posted = Date.now();
      await runnerViaB.postEvents(taskId, attempt, [{ sequence: 3, type: "assistant.delta", payload: { messageId: "m1", text: "partial words" } }]);
      await until(posted + 5_000, () => updates.length > 0);
      expect(updates).toEqual([
        {
          uri,
          meta: expect.objectContaining({ "io.modelcontextprotocol/subscriptionId": expect.anything(), [VERSION]: expect.any(String) }),
          at: expect.any(Number),
        },
      ]);
      expect(updates[0]!.at - posted).toBeLessThan(500);
      // The version told is the one the resource reads now; the resource answers what read answers.
      expect(await versionOf(client, uri)).toBe(updates[0]!.meta[VERSION]);
      const read = await client.readResource({ uri });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ state: "running", partialText: "partial words" });

      // The turn ends: one more update, nothing for what did not change.
      await runnerViaB.complete(taskId, {
        attempt,
        status: "done",
        localSessionId: `ses_${taskId}`,
        events: [{ sequence: 4, type: "assistant.final", payload: { messageId: "m1", text: "partial words, done" } }],
      });
      await until(Date.now() + 5_000, () => updates.length > 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(updates).toHaveLength(2);
      await subscription.close();
      await until(Date.now() + 2_000, () => a.push!.stats().pushStreams === 0);
      expect(a.push!.stats().pushStreams).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("leaves another member's session and an unknown one out of the acknowledged filter alike", async () => {
    const client = await modernClient(a, alice);
    const { uri } = await runningSession(client);
    await client.close();
    const unknown = "remote-session://rs_00000000000000000000000000";
    const bobs = await modernClient(b, bob);
    try {
      const foreign = await bobs.listen({ resourceSubscriptions: [uri] });
      const never = await bobs.listen({ resourceSubscriptions: [unknown] });
      expect(foreign.honoredFilter).toEqual({});
      expect(never.honoredFilter).toEqual(foreign.honoredFilter);
      // Both ended at once, gracefully (the listen's result, stamped as the SDK stamps it): nothing is watched for Bob.
      expect(await foreign.closed).toBe("graceful");
      const raw = await messages(await rawListen(b, bob, [uri]), () => false, 2_000);
      expect(raw.map((m) => m.method ?? m.result)).toEqual([
        "notifications/subscriptions/acknowledged",
        {
          resultType: "complete",
          _meta: {
            "io.modelcontextprotocol/subscriptionId": "listen-raw",
            "io.modelcontextprotocol/serverInfo": expect.objectContaining({ name: expect.any(String) }),
          },
        },
      ]);
      expect(b.push!.stats().pushStreams).toBe(0);
      await expect(bobs.readResource({ uri })).rejects.toThrow(/not found/i);
    } finally {
      await bobs.close();
    }
  });

  it("misses nothing across a replica going away: listening again elsewhere with the version last read tells at once what moved", async () => {
    const client = await modernClient(b, alice);
    const { uri, taskId, attempt } = await runningSession(client);
    const lastRead = await versionOf(client, uri);
    await client.close();
    // A listener on A, acknowledged; then A goes away with it, its connections cut as a killed
    // replica's (no graceful end), and the session moves meanwhile.
    const onA = messages(await rawListen(a, alice, [uri], { [uri]: lastRead }), () => false, 10_000);
    while (a.push!.stats().pushStreams < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await a.close();
    expect(await onA).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { resourceSubscriptions: [uri] }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen-raw" } },
      },
    ]);
    await runnerViaB.postEvents(taskId, attempt, [{ sequence: 3, type: "assistant.delta", payload: { messageId: "m1", text: "while away" } }]);

    // Listening again on B with the version last read: the acknowledgement, then the missed change, at once.
    const missed = await messages(await rawListen(b, alice, [uri], { [uri]: lastRead }), (seen) => seen.length >= 2, 2_000);
    expect(missed.map((m) => m.method)).toEqual(["notifications/subscriptions/acknowledged", "notifications/resources/updated"]);
    const told = missed[1].params._meta[VERSION];
    expect(told).not.toBe(lastRead);
    // Naming the version now: nothing is owed, so nothing comes but the acknowledgement.
    const caughtUp = await messages(await rawListen(b, alice, [uri], { [uri]: told }), () => false, 800);
    expect(caughtUp.map((m) => m.method)).toEqual(["notifications/subscriptions/acknowledged"]);
  });

  it("holds a member to its push streams per replica, listens and GET streams together", async () => {
    const streams: AbortController[] = [];
    try {
      // A queued session of Alice's (replica A, whose desktop client would claim it, is gone by now).
      const client = await modernClient(b, alice);
      const created = (await client.callTool({
        name: "execute_capability",
        arguments: { name: "remote-session:create", body: { target: "desktop", prompt: "held" } },
      })) as { structuredContent: { sessionId: string } };
      await client.close();
      const uri = `remote-session://${created.structuredContent.sessionId}`;
      // One 2025-era GET stream of a stateful session holds one of the sixteen.
      const headers = { authorization: `Bearer ${alice.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
      const init = await fetch(b.mcpUrl, {
        method: "POST",
        headers: { ...headers, "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        }),
      });
      const mcpSessionId = init.headers.get("mcp-session-id")!;
      await init.text();
      const held = new AbortController();
      streams.push(held);
      const stream = await fetch(b.mcpUrl, { headers: { ...headers, "mcp-session-id": mcpSessionId }, signal: held.signal });
      expect(stream.status).toBe(200);
      for (;;) {
        const abort = new AbortController();
        const response = await rawListen(b, alice, [uri], undefined, abort.signal);
        if (response.status === 429) {
          expect(await response.json()).toMatchObject({ error: "rate_limited", retryAfterMs: expect.any(Number) });
          break;
        }
        expect(response.status).toBe(200);
        streams.push(abort);
        expect(streams.length).toBeLessThanOrEqual(16);
      }
      expect(streams).toHaveLength(16);
    } finally {
      for (const stream of streams) stream.abort();
    }
  });
});
