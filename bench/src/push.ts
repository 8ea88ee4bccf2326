// Push: output a desktop runner posts → `notifications/resources/updated` at a subscribed MCP
// client of the 2025 era (GET stream) and at a listening client of MCP 2026-07-28
// (`subscriptions/listen`), beside a `read` with waitMs waiting for the same output (same run,
// same post); then
// 500 subscribed clients (raw Streamable HTTP: initialize, subscribe, GET stream) on one gateway
// process: PostgreSQL connections before and after, memory, and the fan-out of one change.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import postgres from "postgres";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 100);
const CLIENTS = Number(process.env.CLIENTS ?? 500);
const SESSIONS = Number(process.env.SESSIONS ?? 50);
const db = await benchDatabase("push");
const rows: Record<string, Record<string, unknown>> = {};
try {
  // Every client is the bench member's: its per-member limits (16 streams, 64 sessions, 64 requests in flight, each stream one) would refuse the rest.
  const fixture = await benchGateway(db.url, {
    memberLimits: {
      pushStreams: CLIENTS + 1,
      mcpSessions: CLIENTS + 1,
      mcpRequestsInFlight: CLIENTS + 64,
      mcpSessionOpens: { burst: CLIENTS + 1, perSecond: CLIENTS },
    },
  });
  const runner = await fixture.runnerClient("bench-push-desktop");
  const ok = async (name: string, body: unknown) => {
    const result = await fixture.execute(name, body);
    if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
    return result.structuredContent as Record<string, any>;
  };
  /** A desktop session whose first turn is done: ready for follow-ups. */
  const idleSession = async () => {
    const { sessionId } = await ok("remote-session:create", { target: "desktop", prompt: "start" });
    const task = (await runner.claimNext())!;
    await runner.complete(task.taskId, {
      attempt: task.attempt,
      status: "done",
      localSessionId: `ses_${sessionId}`,
      events: [{ sequence: 1, type: "assistant.final", payload: { messageId: "m0", text: "ready" } }],
    });
    return sessionId as string;
  };

  // 1. Latency: each sample is a follow-up whose reply the runner posts with its completion.
  const sessionId = await idleSession();
  const client = new Client({ name: "bench-push", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(fixture.gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }),
  );
  let notified: (at: number) => void = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => notified(performance.now()));
  await client.subscribeResource({ uri: `remote-session://${sessionId}` });
  while (fixture.gateway.push!.stats().pushWatchers < 1) await sleep(20);
  const modern = new ModernClient({ name: "bench-listen", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await modern.connect(new ModernTransport(new URL(fixture.gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }));
  let listened: (at: number) => void = () => {};
  modern.setNotificationHandler("notifications/resources/updated", () => listened(performance.now()));
  const listening = await modern.listen({ resourceSubscriptions: [`remote-session://${sessionId}`] });
  const pushed: number[] = [];
  const heard: number[] = [];
  const waited: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const sent = await ok("remote-session:send", { sessionId, prompt: `follow-up ${i}` });
    const task = (await runner.claimNext())!;
    const reading = ok(sent.next.name, sent.next.body).then(() => performance.now());
    // Let the claim's own notification and the read's first look pass before the post.
    await sleep(60);
    const notification = new Promise<number>((resolve) => (notified = resolve));
    const heardAt = new Promise<number>((resolve) => (listened = resolve));
    const t0 = performance.now();
    await runner.complete(task.taskId, {
      attempt: task.attempt,
      status: "done",
      localSessionId: `ses_${sessionId}`,
      events: [{ sequence: 1, type: "assistant.final", payload: { messageId: `m${i + 1}`, text: `reply ${i}` } }],
    });
    const [notifiedAt, listenedAt, readAt] = await Promise.all([notification, heardAt, reading]);
    pushed.push(notifiedAt - t0);
    heard.push(listenedAt - t0);
    waited.push(readAt - t0);
  }
  await client.close();
  // Its push stream counts against the member's until the listen ends.
  await listening.close();
  await modern.close();
  rows["output posted → notification received (2025 era: subscribed client, GET stream)"] = { ...summarize(pushed), unit: "ms" };
  rows["output posted → notification received (2026-07-28: listening client)"] = { ...summarize(heard), unit: "ms" };
  rows["baseline: output posted → read with waitMs returns (same post)"] = { ...summarize(waited), unit: "ms" };

  // 2. Many subscribed clients on one process, as raw HTTP clients (cheap on the bench's side).
  const sessions: string[] = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await idleSession());
  const stats = postgres(db.url, { max: 1, onnotice: () => {} });
  const connections = async () => {
    const [row] = (await stats`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`) as unknown as [
      { n: number },
    ];
    return row.n;
  };
  const rpc = async (body: Record<string, unknown>, mcpSessionId?: string) =>
    fetch(fixture.gateway.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${member.mcpToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(mcpSessionId ? { "mcp-session-id": mcpSessionId } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
    });
  const heap = () => process.memoryUsage();
  const before = { connections: await connections(), memory: heap() };
  const received = new Map<string, number[]>();
  // Which remote session each MCP session watches.
  const watched = new Map<string, string>();
  const controller = new AbortController();
  const subscribe = async (i: number) => {
    const init = await rpc({ method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: `c${i}`, version: "1" } } });
    const mcpSessionId = init.headers.get("mcp-session-id")!;
    await init.text();
    const uri = `remote-session://${sessions[i % SESSIONS]}`;
    watched.set(mcpSessionId, sessions[i % SESSIONS]!);
    await (await rpc({ method: "resources/subscribe", params: { uri } }, mcpSessionId)).text();
    const stream = await fetch(fixture.gateway.mcpUrl, {
      headers: { authorization: `Bearer ${member.mcpToken}`, accept: "text/event-stream", "mcp-session-id": mcpSessionId },
      signal: controller.signal,
    });
    const times: number[] = [];
    received.set(mcpSessionId, times);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          for (const _ of value.matchAll(/notifications\/resources\/updated/g)) times.push(performance.now());
        }
      } catch {
        // aborted at the end
      }
    })();
  };
  const open = async (from: number, to: number) => {
    for (let i = from; i < to; i += 50) await Promise.all(Array.from({ length: Math.min(50, to - i) }, (_, j) => subscribe(i + j)));
    while (fixture.gateway.push!.stats().pushWatchers < to) await sleep(50);
    await sleep(1_000);
  };
  const fifth = Math.round(CLIENTS / 5);
  await open(0, fifth);
  const atFifth = await connections();
  await open(fifth, CLIENTS);
  const after = { connections: await connections(), memory: heap() };
  rows[`${CLIENTS} subscribed clients, one process`] = {
    clients: CLIENTS,
    watchedSessions: SESSIONS,
    dbConnectionsBefore: before.connections,
    [`dbConnectionsAt${fifth}`]: atFifth,
    dbConnectionsAfter: after.connections,
    rssBeforeMiB: +(before.memory.rss / 2 ** 20).toFixed(1),
    rssAfterMiB: +(after.memory.rss / 2 ** 20).toFixed(1),
    perClientKiB: +((after.memory.rss - before.memory.rss) / CLIENTS / 1024).toFixed(1),
  };
  // One change on every session: each of its subscribers hears of it once.
  const marks = new Map([...received].map(([id, times]) => [id, times.length]));
  const fanout: number[] = [];
  const sentAt = new Map<string, number>();
  for (const id of sessions) {
    sentAt.set(id, performance.now());
    await ok("remote-session:send", { sessionId: id, prompt: "to everyone" });
  }
  const deadline = Date.now() + 30_000;
  while ([...received].some(([id, times]) => times.length === marks.get(id)) && Date.now() < deadline) await sleep(20);
  for (const [id, times] of received) if (times.length > marks.get(id)!) fanout.push(times[marks.get(id)!]! - sentAt.get(watched.get(id)!)!);
  rows[`a change on each of ${SESSIONS} sessions → all ${CLIENTS} subscribers told`] = { ...summarize(fanout), unit: "ms", told: fanout.length };
  controller.abort();
  await stats.end();
  await fixture.close();
} finally {
  await db.stop();
}
await report("push", db.server, rows, [
  `Latency: ${SAMPLES} follow-ups on one desktop session; the runner completes each with its reply; from the completion request's start to the notification at a subscribed SDK 1.x client (2025 era, its GET stream), at a listening v2 client pinned to 2026-07-28 (subscriptions/listen), and to the return of a read with waitMs started before it (baseline), same post.`,
  `${CLIENTS} raw Streamable HTTP clients in the bench's process (initialize → resources/subscribe → GET stream), ${CLIENTS / SESSIONS} per session; the gateway in the same process (memory is both). Fan-out: a follow-up sent on each session in turn (its state moves to queued), each subscriber timed from its session's send request. The pool holds at most 20 connections (+1 LISTEN): a number that does not grow with the clients.`,
]);
process.exit(0);
