import { mintRunnerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startR0Double } from "./testing/openwork-r0-double.js";
import { SECRET, type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// OpenWork's runner channel, checked item by item against the wire spec's checklist (§5; the
// numbers in the test names). Remote-session commands and requests have their own file.
const db = useTestDatabase();
let gateway: RunnerGateway;
let sessionRunnersOn = false;
const alice = { organizationId: "org_ow", memberId: "mem_ow_alice" };
const PROXY = "https://app.openwork.test";

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, {
    dialects: ["desktop-runner", "openwork"],
    proxyTrust: { origins: [PROXY], prefix: "/api/den" },
    timings: { keepaliveMs: 15_000 },
    sessionRunnerTargets: async () => sessionRunnersOn,
  });
});
afterAll(async () => {
  await gateway.close();
});

const mintBody = (overrides: Record<string, unknown> = {}) => ({
  runnerId: "3f0c9a1e-install-0001",
  protocolVersion: 1,
  supportedExecutionTargets: ["desktop"],
  capabilities: ["model_attention_v1"],
  appVersion: "0.18.16",
  platform: "darwin",
  concurrency: 1,
  ...overrides,
});
// In process (the routes' fetch, no socket) where the transport is not the point.
const post = (path: string, authorization: string, body: unknown, headers: Record<string, string> = {}) =>
  gateway.request(path, { method: "POST", headers: { authorization, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const get = (path: string, authorization: string, headers: Record<string, string> = {}) => gateway.request(path, { headers: { authorization, ...headers } });
const memberAuth = () => `Bearer ${gateway.memberToken(alice)}`;
async function mintFor(body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await post("/v1/automation-runners/token", memberAuth(), mintBody(body), headers);
  return { response, body: (await response.json()) as { token: string; expiresAt: number; eventsPath: string } };
}
const runnerRoutes = (runId = "arun_1") =>
  [
    ["GET", "/v1/automation-runner/work", undefined],
    ["POST", `/v1/automation-runs/${runId}/claim`, {}],
    ["POST", `/v1/automation-runs/${runId}/heartbeat`, { attempt: 1 }],
    ["GET", "/v1/remote-session-requests/pending", undefined],
    ["PUT", "/v1/automation-runner/inventory", { computer: { label: "Mac" } }],
  ] as const;
const send = (method: string, path: string, token: string, body?: unknown) =>
  gateway.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("OpenWork dialect: mint", () => {
  it("(14, 15, 18) mints at the plural path with OpenWork's body and answer, ignoring unknown members, and records the runner", async () => {
    const { response, body } = await mintFor({ somethingNew: true });
    expect(response.status).toBe(200);
    expect(body).toEqual({ token: expect.any(String), expiresAt: expect.any(Number), eventsPath: "/v1/automation-runners/events" });
    const verified = verifyRunnerToken(body.token, { secret: SECRET });
    expect(verified).toMatchObject({
      ok: true,
      claims: { v: 2, o: alice.organizationId, m: alice.memberId, r: "3f0c9a1e-install-0001", c: ["model_attention_v1"], e: body.expiresAt },
    });
    const [row] = await gateway.sql<{ dialect: string; capabilities: string[]; platform: string }[]>`
      select dialect, capabilities, platform from desktop_runner where runner_id = '3f0c9a1e-install-0001'`;
    expect(row).toEqual({ dialect: "openwork", capabilities: ["model_attention_v1"], platform: "darwin" });
  });

  it("(16) answers 400 invalid_request with details for an unknown capability, so D4's bridge can step down", async () => {
    const { response, body } = await mintFor({ capabilities: ["model_attention_v1", "remote_session_v1", "remote_session_control_v1", "teleport_v1"] });
    expect(response.status).toBe(400);
    expect(body).toMatchObject({ error: "invalid_request", details: [expect.objectContaining({ message: expect.any(String) })] });
    expect((await mintFor({ capabilities: ["model_attention_v1", "remote_session_v1", "remote_session_control_v1"] })).response.status).toBe(200);
  });

  it("(12, 13) names the entry point as audience: through the trusted proxy its origin plus /api/den, directly the request's base", async () => {
    const direct = await mintFor();
    expect(verifyRunnerToken(direct.body.token, { secret: SECRET })).toMatchObject({ claims: { a: gateway.baseUrl } });
    const proxied = await mintFor({}, { "x-forwarded-prefix": "/api/den/", "x-forwarded-host": "app.openwork.test", "x-forwarded-proto": "https" });
    expect(verifyRunnerToken(proxied.body.token, { secret: SECRET })).toMatchObject({ claims: { a: `${PROXY}/api/den` } });
    // An untrusted forwarded host is ignored (the forwarded scheme is taken as den-api takes it).
    const spoofed = await mintFor({}, { "x-forwarded-prefix": "/api/den", "x-forwarded-host": "evil.test" });
    expect(verifyRunnerToken(spoofed.body.token, { secret: SECRET })).toMatchObject({ claims: { a: gateway.baseUrl } });
  });

  it("(19) mints session-runner tokens only with the feature, signing remote_session_only_v1 in", async () => {
    sessionRunnersOn = false;
    const off = await post(
      "/v1/session-runners/token",
      memberAuth(),
      mintBody({ runnerId: "oc_runner_0123456789abcdef", capabilities: ["remote_session_v1"] }),
    );
    expect(off.status).toBe(404);
    expect(await off.json()).toMatchObject({ error: "feature_disabled" });
    sessionRunnersOn = true;
    const on = await post("/v1/session-runners/token", memberAuth(), mintBody({ runnerId: "oc_runner_0123456789abcdef", capabilities: ["remote_session_v1"] }));
    const { token, eventsPath } = (await on.json()) as { token: string; eventsPath: string };
    expect(eventsPath).toBe("/v1/automation-runners/events");
    expect(verifyRunnerToken(token, { secret: SECRET })).toMatchObject({ claims: { c: ["remote_session_v1", "remote_session_only_v1"] } });
  });

  it("answers 401 unauthorized without a member session, 400 before that for a malformed body", async () => {
    expect((await post("/v1/automation-runners/token", "Bearer nobody", mintBody())).status).toBe(401);
    expect((await post("/v1/automation-runners/token", memberAuth(), mintBody({ concurrency: 9 }))).status).toBe(400);
  });
});

describe("OpenWork dialect: runner routes", () => {
  it("(20, 21) reports presence {connected, lastSeenAt} in epoch ms, refreshed by work polls", async () => {
    const { body } = await mintFor({ runnerId: "presence-install-0001" });
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '20 minutes' where member_id = ${alice.memberId}`;
    const stale = (await (await get("/v1/automation-runners/presence", memberAuth())).json()) as { connected: boolean; lastSeenAt: number };
    expect(stale.connected).toBe(false);
    expect(typeof stale.lastSeenAt).toBe("number");
    expect((await send("GET", "/v1/automation-runner/work", body.token)).status).toBe(200);
    const fresh = (await (await get("/v1/automation-runners/presence", memberAuth())).json()) as { connected: boolean; lastSeenAt: number };
    expect(fresh.connected).toBe(true);
    expect(Date.now() - fresh.lastSeenAt).toBeLessThan(60_000);
  });

  it("(28, 31, 32) lists no work for an automation-only desktop: {items: []}, never an item without runId", async () => {
    const { body } = await mintFor({ runnerId: "r0-install-0001" });
    const response = await send("GET", "/v1/automation-runner/work", body.token);
    expect(await response.json()).toEqual({ items: [] });
  });

  it("(35, 38, 39, 42) answers a run claim with assignment null and the other run routes with runner_lease_lost, never 404", async () => {
    const { body } = await mintFor({ runnerId: "r0-install-0002" });
    const claim = await send("POST", "/v1/automation-runs/arun_01unknown/claim", body.token, {});
    expect([claim.status, await claim.json()]).toEqual([200, { assignment: null }]);
    for (const [path, payload] of [
      ["heartbeat", { attempt: 1 }],
      ["events", { attempt: 1, sequence: 1, type: "user", payload: { text: "x" }, createdAt: Date.now() }],
      ["complete", { attempt: 1, status: "succeeded", sessionId: null, workspaceId: null, resultSummary: null, usage: null, error: null }],
    ] as const) {
      const response = await send("POST", `/v1/automation-runs/arun_01unknown/${path}`, body.token, payload);
      expect([path, response.status, await response.json()]).toEqual([path, 409, { error: "runner_lease_lost" }]);
    }
    // Body validation comes before authentication, as in den-api.
    const malformed = await fetch(`${gateway.baseUrl}/v1/automation-runs/arun_1/heartbeat`, { method: "POST", body: JSON.stringify({ attempt: 0 }) });
    expect([malformed.status, (await malformed.json()) as unknown]).toEqual([400, expect.objectContaining({ error: "invalid_request" })]);
  });

  it("(6, 7) refuses bad tokens with 401 runner_unauthorized on every runner route, and reads Bearer in any case", async () => {
    const { body } = await mintFor({ runnerId: "auth-install-0001" });
    const expired = mintRunnerToken({
      secret: SECRET,
      organizationId: alice.organizationId,
      memberId: alice.memberId,
      runnerId: "auth-install-0001",
      capabilities: [],
      audience: gateway.baseUrl,
      now: Date.now() - 13 * 3_600_000,
    }).token;
    // The signature's last character changed (to another one: the same one would be the token itself).
    const tampered = `${body.token.slice(0, -1)}${body.token.endsWith("A") ? "B" : "A"}`;
    for (const bad of [expired, tampered, "not-a-token", ""]) {
      for (const [method, path, payload] of runnerRoutes()) {
        const response = await send(method, path, bad, payload);
        expect([path, response.status, await response.json()]).toEqual([path, 401, { error: "runner_unauthorized" }]);
      }
    }
    const lower = await fetch(`${gateway.baseUrl}/v1/automation-runner/work`, { headers: { authorization: `bearer   ${body.token}` } });
    expect(lower.status).toBe(200);
  });

  it("(9, 10, 11) accepts a validly signed token minted elsewhere: another audience, no registration here, capabilities from the token", async () => {
    const elsewhere = mintRunnerToken({
      secret: SECRET,
      organizationId: alice.organizationId,
      memberId: alice.memberId,
      runnerId: "den-minted-install-01",
      capabilities: ["remote_session_v1"],
      audience: "https://den.example.test/api/den",
    }).token;
    expect((await send("GET", "/v1/automation-runner/work", elsewhere)).status).toBe(200);
    const claim = await send("POST", "/v1/remote-session-commands/rsc_unknown/claim", elsewhere, {});
    expect([claim.status, await claim.json()]).toEqual([409, { error: "command_claim_conflict" }]);
    const [row] = await gateway.sql<{ dialect: string }[]>`select dialect from desktop_runner where runner_id = 'den-minted-install-01'`;
    expect(row?.dialect).toBe("openwork");
  });

  it("(62) answers a removed member and a revoked desktop with 401, never 403; a revoked desktop mints again only once its owner re-enabled it", async () => {
    const bobScope = { organizationId: "org_ow", memberId: "mem_ow_bob" };
    const mintAgain = () => post("/v1/automation-runners/token", `Bearer ${gateway.memberToken(bobScope)}`, mintBody({ runnerId: "bob-install-00001" }));
    const { token } = (await (await mintAgain()).json()) as { token: string };
    const owner = (method: string, path: string) =>
      fetch(`${gateway.baseUrl}/v1/desktop-runner/runners/bob-install-00001${path}`, {
        method,
        headers: { authorization: `Bearer ${gateway.memberToken(bobScope)}` },
      });
    expect((await owner("DELETE", "")).status).toBe(200);
    expect((await send("GET", "/v1/automation-runner/work", token)).status).toBe(401);
    // Its own mint does not undo the revocation: 404 (a released desktop then waits instead of stepping down), with the step.
    const refused = await mintAgain();
    expect([refused.status, await refused.json()]).toEqual([404, { error: "runner_revoked", message: expect.stringMatching(/re-enables it/) }]);
    expect((await owner("POST", "/enable")).status).toBe(200);
    expect((await send("GET", "/v1/automation-runner/work", token)).status).toBe(401);
    const again = await mintAgain();
    const fresh = ((await again.json()) as { token: string }).token;
    expect((await send("GET", "/v1/automation-runner/work", fresh)).status).toBe(200);
    gateway.removeMember(bobScope);
    const removed = await send("GET", "/v1/automation-runner/work", fresh);
    expect([removed.status, await removed.json()]).toEqual([401, { error: "runner_unauthorized" }]);
  });

  it("serves each runner in the dialect it registered with", async () => {
    const ours = await gateway.registerRunner(alice, "ours-runner-0001");
    expect((await send("GET", "/v1/automation-runner/work", ours)).status).toBe(401);
    const { body } = await mintFor({ runnerId: "theirs-install-01" });
    expect((await send("GET", "/v1/desktop-runner/work", body.token)).status).toBe(401);
  });

  it("(45, 53, 54) requires the capability for command and request routes (403) and lists no requests without it (not 403)", async () => {
    const { body } = await mintFor({ runnerId: "caps-install-0001", capabilities: ["model_attention_v1"] });
    const claim = await send("POST", "/v1/remote-session-commands/rsc_1/claim", body.token, {});
    expect([claim.status, await claim.json()]).toEqual([403, { error: "runner_capability_missing" }]);
    const requestClaim = await send("POST", "/v1/remote-session-requests/rsr_1/claim", body.token, {});
    expect(requestClaim.status).toBe(403);
    expect(await (await send("GET", "/v1/remote-session-requests/pending", body.token)).json()).toEqual({ items: [] });
  });

  it("(58) replaces the inventory sent in OpenWork's body (workspaceId, engine, models) and answers {ok, updatedAt}", async () => {
    const { body } = await mintFor({ runnerId: "inventory-install-01" });
    const workspace = {
      workspaceId: "ws_1",
      name: "Main",
      active: true,
      engine: "v2",
      defaultModel: { providerId: "openai", modelId: "gpt-5", variant: "high" },
      models: [{ providerId: "openai", modelId: "gpt-5", name: "GPT-5" }],
    };
    const response = await send("PUT", "/v1/automation-runner/inventory", body.token, {
      computer: { label: "Work Laptop", platform: "darwin", appVersion: "0.19.0" },
      workspaces: [workspace],
      extra: 1,
    });
    expect(await response.json()).toEqual({ ok: true, updatedAt: expect.any(Number) });
    const [row] = await gateway.sql<{ inventory: { workspaces: unknown[] } }[]>`select inventory from desktop_runner where runner_id = 'inventory-install-01'`;
    expect(row?.inventory.workspaces).toEqual([workspace]);
    const tooMany = await send("PUT", "/v1/automation-runner/inventory", body.token, {
      workspaces: Array.from({ length: 51 }, (_, i) => ({ workspaceId: `ws_${i}` })),
    });
    expect([tooMany.status, ((await tooMany.json()) as { error: string }).error]).toEqual([400, "invalid_request"]);
  });
});

describe("OpenWork dialect: under the base path OpenWork desktops use", () => {
  const FAMILIES = [
    "/v1/automation-runners",
    "/v1/automation-runner",
    "/v1/automation-runs",
    "/v1/remote-session-commands",
    "/v1/remote-session-requests",
    "/v1/session-runners",
  ];

  it("(12) serves /api/den/v1/…: a direct mint there names <base>/api/den as audience, the desktop's base URL; its token works there", async () => {
    const den = `${gateway.baseUrl}/api/den`;
    const response = await fetch(`${den}/v1/automation-runners/token`, {
      method: "POST",
      headers: { authorization: memberAuth(), "content-type": "application/json" },
      body: JSON.stringify(mintBody({ runnerId: "den-base-install-01" })),
    });
    const { token } = (await response.json()) as { token: string };
    expect(verifyRunnerToken(token, { secret: SECRET })).toMatchObject({ claims: { a: den } });
    const work = await fetch(`${den}/v1/automation-runner/work`, { headers: { authorization: `Bearer ${token}` } });
    expect([work.status, await work.json()]).toEqual([200, { items: [] }]);
    // Through the trusted proxy, with or without the prefix left on the path.
    const proxied = { "x-forwarded-prefix": "/api/den", "x-forwarded-host": "app.openwork.test", "x-forwarded-proto": "https" };
    const kept = await fetch(`${den}/v1/automation-runners/token`, {
      method: "POST",
      headers: { authorization: memberAuth(), "content-type": "application/json", ...proxied },
      body: JSON.stringify(mintBody({ runnerId: "den-base-install-01" })),
    });
    expect(verifyRunnerToken(((await kept.json()) as { token: string }).token, { secret: SECRET })).toMatchObject({ claims: { a: `${PROXY}/api/den` } });
  });

  it("mounts every route family under each base path, answering unknown routes there with OpenWork's JSON 404", async () => {
    for (const base of ["", "/api/den"]) {
      for (const family of FAMILIES) {
        expect(gateway.routes.prefixes).toContain(`${base}${family}`);
        const response = await fetch(`${gateway.baseUrl}${base}${family}/no-such-route`, { headers: { authorization: "Bearer x" } });
        expect([family, response.status, response.headers.get("content-type"), await response.json()]).toEqual([
          family,
          404,
          "application/json",
          { error: "not_found" },
        ]);
      }
    }
    expect(await gateway.routes.handle(new Request(`${gateway.baseUrl}/elsewhere/v1/automation-runner/work`))).toBeNull();
  });
});

describe("OpenWork dialect: the wake stream", () => {
  it("(22, 23) holds a text/event-stream open with OpenWork's keepalive first, no id", async () => {
    const { body } = await mintFor({ runnerId: "stream-install-01" });
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/automation-runners/events`, {
      headers: { authorization: `Bearer ${body.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe("event: keepalive\ndata: {}\n\n");
    controller.abort();
  });

  it("(59) keeps a released desktop calm: 60 s connected cost at most 4 requests (1 stream + 1 work poll, one spare reconnect each)", async () => {
    const { body } = await mintFor({ runnerId: "calm-install-0001" });
    const r0 = await startR0Double({ baseUrl: gateway.baseUrl, token: body.token });
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    await r0.stop();
    expect(r0.requests.length, r0.requests.join("\n")).toBeLessThanOrEqual(4);
    expect(r0.requests).toContain("GET /v1/automation-runners/events -> 200");
  }, 70_000);

  it("(61) takes R0's bridge minting again every 5 minutes: each new token opens a new stream, the old one just ends", async () => {
    const r0 = await startR0Double({ baseUrl: gateway.baseUrl, memberToken: gateway.memberToken(alice), runnerId: "r0-bridge-install-1", refreshMs: 300 });
    const minted = () => r0.requests.filter((r) => r.startsWith("POST /v1/automation-runners/token"));
    const streamed = () => r0.requests.filter((r) => r.startsWith("GET /v1/automation-runners/events"));
    // At least three mints and two streams (about a second at 300 ms; longer on a loaded machine,
    // where a stream is recorded a little after the mint that opened it).
    await expect.poll(() => minted().length >= 3 && streamed().length >= 2, { timeout: 10_000, interval: 50 }).toBe(true);
    await r0.stop();
    const mints = minted();
    expect(mints.length).toBeGreaterThanOrEqual(3);
    expect(mints.every((r) => r.endsWith("-> 200"))).toBe(true);
    // One stream per token, each held open (200) until the next token replaced it.
    const streams = streamed();
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams.length).toBeLessThanOrEqual(mints.length + 1);
    expect(streams.every((r) => r.endsWith("-> 200"))).toBe(true);
  });

  it("(59) is a faithful double: against a gateway without OpenWork's paths it hot-loops as the real R0 does", async () => {
    const { body } = await mintFor({ runnerId: "loop-install-0001" });
    const oursOnly = `${gateway.baseUrl}/v1/desktop-runner`;
    const r0 = await startR0Double({ baseUrl: oursOnly, token: body.token });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await r0.stop();
    // About two stream requests and two work polls a second.
    expect(r0.requests.length).toBeGreaterThan(8);
  });
});
