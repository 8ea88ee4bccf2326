import { requestRunnerToken, RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// One member floods; another uses the same process. Each flood must cost the flooder only.
const db = useTestDatabase();
const flooder = fixedDevMember("flooder");
const bystander = fixedDevMember("calm");
const WAITING_READS = 6;
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, bystander, {
    members: () => [flooder, bystander],
    memberLimits: { waitingReads: WAITING_READS },
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

/** A queued desktop session of `who` (a registered runner makes the desktop target available). */
async function queuedSession(who: DevMember): Promise<string> {
  await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: who.sessionToken,
    request: { runnerId: `runner-${who.name}-0001`, name: who.name, platform: "linux", appVersion: "1", protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: [...RUNNER_CAPABILITIES] },
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
