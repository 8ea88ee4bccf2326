import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { requestRunnerToken } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember, userIdOf } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// One member floods; another uses the same process. Each flood must cost the flooder only.
const db = useTestDatabase();
const flooder = fixedDevMember("flooder");
const bystander = fixedDevMember("calm");
const WAITING_READS = 6;
const IN_FLIGHT = 8;
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, bystander, {
    members: () => [flooder, bystander],
    memberLimits: {
      mcpRequestsInFlight: IN_FLIGHT,
      waitingReads: WAITING_READS,
      pushStreams: 2,
      mcpSessions: 3,
      mcpSessionOpens: { burst: 12, perSecond: 0.5 },
      runnerStreamOpensPerToken: { burst: 4, perSecond: 0.5 },
    },
  });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

/** A raw stateless `execute_capability` call as `who`, abortable; resolves with its structured result. */
async function execute(who: DevMember, name: string, body: unknown, signal?: AbortSignal) {
  const response = await fetch(test.gateway.mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${who.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_capability", arguments: { name, body } } }),
    ...(signal ? { signal } : {}),
  });
  const json = (await response.json()) as { result: { structuredContent: Record<string, unknown>; isError?: boolean } };
  return json.result;
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

/** A raw `initialize` as `who`: the response (its `mcp-session-id` when it is one). */
async function initialize(who: DevMember): Promise<Response> {
  const response = await fetch(test.gateway.mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${who.mcpToken}`, ...MCP_HEADERS },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await response.body?.cancel();
  return response;
}
const sessionOf = async (who: DevMember) => (await initialize(who)).headers.get("mcp-session-id")!;
/** `method` on an MCP session (GET: its push stream, left open for the caller). */
const onSession = (who: DevMember, mcpSessionId: string, method: "GET" | "POST", signal?: AbortSignal) =>
  fetch(test.gateway.mcpUrl, {
    method,
    headers: { authorization: `Bearer ${who.mcpToken}`, "mcp-session-id": mcpSessionId, ...MCP_HEADERS },
    ...(method === "POST" ? { body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) } : {}),
    ...(signal ? { signal } : {}),
  });

/** A queued desktop session of `who` (a registered runner makes the desktop target available). */
async function queuedSession(who: DevMember): Promise<string> {
  await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: who.sessionToken,
    request: {
      runnerId: `runner-${who.name}-0001`,
      name: who.name,
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const created = await execute(who, "remote-session:create", { target: "desktop", prompt: "wait for me" });
  expect(created.isError).toBeUndefined();
  return String(created.structuredContent.sessionId);
}

it("ends a waiting read when its client disconnects, not after its whole waitMs", async () => {
  const sessionId = await queuedSession(flooder);
  const clients = Array.from({ length: WAITING_READS }, () => new AbortController());
  const reads = clients.map((client) => execute(flooder, "remote-session:read", { sessionId, waitMs: 25_000 }, client.signal).catch(() => "aborted"));
  await eventually(() => (test.gateway.source.waitingReads() === WAITING_READS && test.gateway.hub.stats().sessionWaiters >= WAITING_READS ? true : undefined));
  for (const client of clients) client.abort();
  expect(await Promise.all(reads)).toEqual(clients.map(() => "aborted"));
  // Well within the 25 s they asked for: nothing waits for a client that is gone.
  await eventually(() => (test.gateway.source.waitingReads() === 0 && test.gateway.hub.stats().sessionWaiters === 0 ? true : undefined), 3_000);
});

it("refuses a member's waiting read past its limit at once (rate_limited, retryAfterMs), while another member's waits", async () => {
  const [mine, theirs] = await Promise.all([queuedSession(flooder), queuedSession(bystander)]);
  const clients = Array.from({ length: WAITING_READS }, () => new AbortController());
  const reads = clients.map((client) => execute(flooder, "remote-session:read", { sessionId: mine, waitMs: 25_000 }, client.signal).catch(() => "aborted"));
  await eventually(() => (test.gateway.source.waitingReads() === WAITING_READS ? true : undefined));
  const refused = await execute(flooder, "remote-session:read", { sessionId: mine, waitMs: 25_000 });
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent).toMatchObject({ error: "rate_limited", retryable: true, retryAfterMs: 1_000 });
  // A read that does not wait is still served, and so is the other member's waiting read.
  expect((await execute(flooder, "remote-session:read", { sessionId: mine })).isError).toBeUndefined();
  const calm = new AbortController();
  const waiting = execute(bystander, "remote-session:read", { sessionId: theirs, waitMs: 25_000 }, calm.signal).catch(() => "aborted");
  await eventually(() => (test.gateway.source.waitingReads() === WAITING_READS + 1 ? true : undefined));
  for (const client of [...clients, calm]) client.abort();
  await Promise.all([...reads, waiting]);
});

it("keeps a member's newest MCP sessions only, ending the oldest (404, its stream closed), without touching another member's", async () => {
  const calm = await sessionOf(bystander);
  const first = await sessionOf(flooder);
  const stream = await onSession(flooder, first, "GET");
  expect(stream.status).toBe(200);
  const later = [await sessionOf(flooder), await sessionOf(flooder), await sessionOf(flooder)];
  const rows = await test.sql<{ n: number }[]>`select count(*)::int as n from mcp_session where user_id = ${userIdOf(flooder)}`;
  expect(rows[0]!.n).toBe(3);
  expect((await onSession(flooder, first, "POST")).status).toBe(404);
  for (const id of later) expect((await onSession(flooder, id, "POST")).status).toBe(200);
  expect((await onSession(bystander, calm, "POST")).status).toBe(200);
  // The ended session's stream was closed by the gateway (every replica hears it).
  const reader = stream.body!.getReader();
  expect(await eventually(async () => ((await reader.read()).done ? true : undefined), 5_000)).toBe(true);
});

it("refuses a member's push stream past its limit before the store is asked, and gives the slot back when a stream closes", async () => {
  const ids = [await sessionOf(flooder), await sessionOf(flooder), await sessionOf(flooder)];
  const clients = ids.map(() => new AbortController());
  const [a, b] = [await onSession(flooder, ids[0]!, "GET", clients[0]!.signal), await onSession(flooder, ids[1]!, "GET", clients[1]!.signal)];
  expect([a.status, b.status]).toEqual([200, 200]);
  const refused = await onSession(flooder, ids[2]!, "GET", clients[2]!.signal);
  expect(refused.status).toBe(429);
  expect(await refused.json()).toMatchObject({ error: "rate_limited", retryable: true, retryAfterMs: expect.any(Number) });
  // Another member's stream is not counted against this one.
  const calm = await onSession(bystander, await sessionOf(bystander), "GET");
  expect(calm.status).toBe(200);
  await calm.body!.cancel();
  clients[0]!.abort();
  const third = await eventually(async () => {
    const response = await onSession(flooder, ids[2]!, "GET", clients[2]!.signal);
    if (response.status === 200) return response;
    await response.body?.cancel();
    return undefined;
  }, 5_000);
  expect(third.status).toBe(200);
  for (const client of clients) client.abort();
});

it("answers a member's MCP requests past its in-flight limit with a 429 before any server is built, while another member's pass", async () => {
  const sessionId = await queuedSession(flooder);
  const clients = Array.from({ length: IN_FLIGHT }, () => new AbortController());
  // Six waiting reads and two push streams hold all eight of the flooder's slots.
  const reads = clients
    .slice(0, WAITING_READS)
    .map((client) => execute(flooder, "remote-session:read", { sessionId, waitMs: 25_000 }, client.signal).catch(() => "aborted"));
  await eventually(() => (test.gateway.source.waitingReads() === WAITING_READS ? true : undefined));
  const streams = [await sessionOf(flooder), await sessionOf(flooder)];
  const opened = await Promise.all(streams.map((id, i) => onSession(flooder, id, "GET", clients[WAITING_READS + i]!.signal)));
  expect(opened.map((r) => r.status)).toEqual([200, 200]);
  const refused = await initialize(flooder);
  expect(refused.status).toBe(429);
  expect((await initialize(bystander)).status).toBe(200);
  // Operators see the refusal by limit, never by member.
  expect(await refusalsOf("mcp_requests_in_flight")).toBeGreaterThanOrEqual(1);
  // A slot comes back when its request's client goes.
  clients[0]!.abort();
  await eventually(async () => ((await initialize(flooder)).status === 200 ? true : undefined), 3_000);
  for (const client of clients) client.abort();
  await Promise.all(reads);
});

it("refuses a member's burst of initializes past its rate with a typed 429, while another member initializes", async () => {
  const statuses: number[] = [];
  let refusal: Response | undefined;
  for (let i = 0; i < 20; i++) {
    const response = await initialize(flooder);
    statuses.push(response.status);
    if (response.status === 429) refusal ??= response;
  }
  expect(statuses).toContain(429);
  expect(Number(refusal!.headers.get("retry-after"))).toBeGreaterThan(0);
  expect((await initialize(bystander)).status).toBe(200);
});

it("refuses a runner token's flood of wake-stream opens with a typed 429 before the runner routes run, keeping its two streams", async () => {
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: flooder.sessionToken,
    request: {
      runnerId: "runner-flooder-streams",
      name: "Streams",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const controller = new AbortController();
  const opened = await Promise.all(
    Array.from({ length: 200 }, () =>
      fetch(`${test.gateway.baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal }),
    ),
  );
  const refused = opened.filter((r) => r.status === 429);
  // The burst (4) got through: the newest two of those stay open; everything else was refused at once.
  expect(opened.filter((r) => r.status === 200).length).toBeLessThanOrEqual(5);
  expect(refused.length).toBeGreaterThanOrEqual(195);
  expect(await refused[0]!.json()).toMatchObject({ error: "rate_limited", retryAfterMs: expect.any(Number) });
  expect(await refusalsOf("runner_stream_opens")).toBeGreaterThanOrEqual(195);
  await eventually(() => (test.gateway.hub.stats().runnerStreams === 2 ? true : undefined));
  controller.abort();
});

/** `openwork_member_refusals_total{limit}` as `/metrics` says now. */
async function refusalsOf(limit: string): Promise<number> {
  const text = await (await fetch(`${test.gateway.baseUrl}/metrics`)).text();
  const sample = text.split("\n").find((line) => line.startsWith(`openwork_member_refusals_total{limit="${limit}"}`));
  return Number(sample?.split(" ").at(-1) ?? 0);
}
