import { useTestDatabase } from "@openwork/test-postgres";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { MAX_CHANNELS_PER_MEMBER } from "@openwork/remote-session-host";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// The member's channel routes on a real gateway over real HTTP and a real PostgreSQL.
const db = useTestDatabase();
const alice = fixedDevMember("notify_alice");
// In Alice's organization: only the member filter keeps them apart.
const bob = { ...fixedDevMember("notify_bob"), organizationId: alice.organizationId };
const carol = { ...fixedDevMember("notify_carol"), organizationId: alice.organizationId };
let test: Awaited<ReturnType<typeof startTestGateway>>;
let strict: Awaited<ReturnType<typeof startTestGateway>>;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  test = await startTestGateway(db.current.url, alice, {
    members: () => [alice, bob, carol],
    notify: { intervalMs: 100, allowPrivateNetworks: true },
    timings: { sweepIntervalMs: 100 },
  });
  // The default: webhooks to private networks refused. Its drain never runs on its own: on the
  // same outbox it would take the first test's delivery and kill it as a private target.
  strict = await startTestGateway(db.current.url, alice, { members: () => [alice, bob], notify: { intervalMs: 3_600_000, wakeOnHints: false } });
}, 60_000);

afterAll(async () => {
  await test?.close();
  await strict?.close();
  await hooks?.close();
});

const call = async (method: string, path: string, token: string | null, body?: unknown, base = test.gateway.baseUrl) => {
  const response = await fetch(`${base}/member/notify${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const webhook = (path: string, extra: Record<string, unknown> = {}) => ({ kind: "webhook", target: hooks.url(path), eventKinds: ["task_expired"], ...extra });

describe("authentication", () => {
  it("takes the member's session token only: none, an MCP token or another token is a 401", async () => {
    for (const token of [null, alice.mcpToken, "session_not_a_member_0123456789"]) {
      const { status, body } = await call("GET", "/channels", token);
      expect(status).toBe(401);
      expect(body).toMatchObject({ error: "unauthorized" });
    }
    expect((await call("GET", "/channels", alice.sessionToken)).status).toBe(200);
  });

  it("refuses the session token on the MCP endpoint", async () => {
    const response = await fetch(test.gateway.mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
  });
});

it("creates a webhook whose secret is shown once, then signs a real state change's notification with it", async () => {
  const created = await call("POST", "/channels", alice.sessionToken, webhook("/alice"));
  expect(created.status).toBe(201);
  expect(created.body.secret).toMatch(/^whsec_/);
  expect(created.body.channel).toMatchObject({ kind: "webhook", target: hooks.url("/alice"), eventKinds: ["task_expired"], enabled: true, allowText: false });
  const listed = await call("GET", "/channels", alice.sessionToken);
  expect(listed.body.channels).toEqual([created.body.channel]);
  expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);

  // A desktop session nobody takes before its deliverBy: the sweeper expires it, the trigger enqueues, the drain sends.
  const session = await test.execute("remote-session:create", {
    target: "desktop",
    prompt: "never taken",
    deliverBy: new Date(Date.now() + 300).toISOString(),
  });
  const sessionId = String(session.structuredContent.sessionId);
  await hooks.until((received) => received.some((hook) => hook.path === "/alice"));
  const hook = hooks.received.find((h) => h.path === "/alice")!;
  const payload = new Webhook(created.body.secret).verify(hook.body, hook.headers as Record<string, string>) as Record<string, any>;
  expect(payload).toMatchObject({ type: "session.task_expired", data: { sessionId, organizationId: alice.organizationId, kind: "task_expired" } });
}, 30_000);

describe("input", () => {
  // Each is refused before its target is looked up: no network involved.
  const webhook = (_: string, extra: Record<string, unknown> = {}) => ({
    kind: "webhook",
    target: "https://hooks.example.com/x",
    eventKinds: ["task_expired"],
    ...extra,
  });
  const invalid = [
    ["not JSON", "{nope", 400, "invalid_request"],
    ["an array", [webhook("/x")], 400, "invalid_request"],
    ["an unknown kind", { ...webhook("/x"), kind: "sms" }, 400, "invalid_channel"],
    ["no event kinds", webhook("/x", { eventKinds: [] }), 400, "invalid_channel"],
    ["an unknown event kind", webhook("/x", { eventKinds: ["everything"] }), 400, "invalid_channel"],
    ["a URL that is not http(s)", webhook("/x", { target: "ftp://example.com/hook" }), 400, "invalid_channel"],
    ["an unknown field", webhook("/x", { priority: 1 }), 400, "invalid_channel"],
    ["someone else's memberId", webhook("/x", { memberId: bob.memberId }), 400, "invalid_channel"],
    ["an email channel without SMTP", { kind: "email", target: "alice@example.com", eventKinds: ["turn_idle"] }, 400, "channel_kind_unavailable"],
    ["a body past 16 KiB", webhook("/x", { padding: "x".repeat(20_000) }), 413, "payload_too_large"],
  ] as const;
  it.each(invalid)("refuses %s with a typed %i", async (_, body, status, error) => {
    const answer = await call("POST", "/channels", alice.sessionToken, body);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ error, retryable: false });
  });

  it("refuses a webhook into a private network unless the gateway opts in", async () => {
    const refused = await call("POST", "/channels", alice.sessionToken, { ...webhook(""), target: hooks.url("/private") }, strict.gateway.baseUrl);
    expect(refused).toMatchObject({ status: 400, body: { error: "invalid_channel", issues: [expect.objectContaining({ path: "target" })] } });
  });

  it("refuses a patch that changes nothing or names an unknown field", async () => {
    const { body } = await call("POST", "/channels", alice.sessionToken, { ...webhook(""), target: hooks.url("/patch") });
    for (const patch of [{}, { eventKinds: [] }, { target: "https://elsewhere.example.com" }, { enabled: "no" }]) {
      const answer = await call("PATCH", `/channels/${body.channel.id}`, alice.sessionToken, patch);
      expect(answer).toMatchObject({ status: 400, body: { error: "invalid_channel" } });
    }
  });
});

it("changes and removes a channel; another member's channel looks exactly like none", async () => {
  const { body } = await call("POST", "/channels", alice.sessionToken, webhook("/owned"));
  const id = body.channel.id;
  const patched = await call("PATCH", `/channels/${id}`, alice.sessionToken, { enabled: false, eventKinds: ["waiting_input", "turn_failed"], allowText: true });
  expect(patched).toMatchObject({ status: 200, body: { channel: { id, enabled: false, eventKinds: ["waiting_input", "turn_failed"], allowText: true } } });

  const missing = "nch_00000000000000000000000000";
  for (const [method, patch] of [
    ["PATCH", { enabled: true }],
    ["DELETE", undefined],
  ] as const) {
    const theirs = await call(method, `/channels/${id}`, bob.sessionToken, patch);
    const none = await call(method, `/channels/${missing}`, bob.sessionToken, patch);
    expect(theirs).toEqual(none);
    expect(theirs).toMatchObject({ status: 404, body: { error: "not_found" } });
  }
  expect((await call("GET", "/channels", bob.sessionToken)).body.channels).toEqual([]);
  // Bob's attempts changed nothing.
  const alices = (await call("GET", "/channels", alice.sessionToken)).body.channels as { id: string; enabled: boolean }[];
  expect(alices.find((c) => c.id === id)).toMatchObject({ enabled: false });

  expect(await call("DELETE", `/channels/${id}`, alice.sessionToken)).toEqual({ status: 200, body: { removed: true } });
  expect((await call("DELETE", `/channels/${id}`, alice.sessionToken)).status).toBe(404);
});

it(`keeps at most ${MAX_CHANNELS_PER_MEMBER} channels per member`, async () => {
  for (let i = 0; i < MAX_CHANNELS_PER_MEMBER; i++) expect((await call("POST", "/channels", bob.sessionToken, webhook(`/bob${i}`))).status).toBe(201);
  expect(await call("POST", "/channels", bob.sessionToken, webhook("/one-too-many"))).toMatchObject({ status: 409, body: { error: "too_many_channels" } });
});

it(`holds the cap of ${MAX_CHANNELS_PER_MEMBER} under concurrent creates: of 25 at once, exactly ${MAX_CHANNELS_PER_MEMBER} are made`, async () => {
  const created = await Promise.all(Array.from({ length: 25 }, (_, i) => call("POST", "/channels", carol.sessionToken, webhook(`/carol${i}`))));
  const statuses = created.map((answer) => answer.status);
  expect(statuses.filter((status) => status === 201)).toHaveLength(MAX_CHANNELS_PER_MEMBER);
  expect(created.filter((answer) => answer.status === 409).map((answer) => answer.body.error)).toEqual(Array.from({ length: 5 }, () => "too_many_channels"));
  expect((await call("GET", "/channels", carol.sessionToken)).body.channels).toHaveLength(MAX_CHANNELS_PER_MEMBER);
});
