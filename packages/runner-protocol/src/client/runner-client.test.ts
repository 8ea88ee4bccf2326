import { afterEach, describe, expect, it } from "vitest";
import { sendJson, startTestServer, type TestHandler, type TestServer } from "../testing/http-test-server.js";
import { startProtocolDouble } from "../testing/protocol-double.js";
import { mintRunnerToken } from "../v1/token.js";
import { createRunnerClient, requestRunnerToken } from "./runner-client.js";
import { RunnerProtocolError } from "./runner-protocol-error.js";

const secret = "x".repeat(32);
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: TestHandler) {
  // When each request arrived: the waits between them are ky's retry delays.
  const arrivals: number[] = [];
  const server = await startTestServer((request, response) => {
    arrivals.push(Date.now());
    return handler(request, response);
  });
  servers.push(server);
  const token = mintRunnerToken({ secret, organizationId: "o", memberId: "m", runnerId: "runner-0001", capabilities: [], audience: server.url }).token;
  const client = createRunnerClient({
    baseUrl: server.url,
    token,
    timeoutMs: 500,
    retry: { limit: 3, backoff: { baseMs: 100, maxMs: 1_000, random: () => 0.5 } },
  });
  return { server, client, arrivals };
}

/** The waits between consecutive requests, in ms. */
const gaps = (arrivals: number[]) => arrivals.slice(1).map((at, i) => at - arrivals[i]!);
// Node may fire a timer a millisecond early, and Date.now() rounds: a wait is "at least" within this.
const SLACK_MS = 5;

const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as RunnerProtocolError,
  );

describe("runner client retries", () => {
  it("backs off exponentially on 5xx and gives up after the limit", async () => {
    const { server, client, arrivals } = await serve((_req, res) => sendJson(res, 503, { error: "unavailable", message: "busy" }));
    const error = await caught(client.work());
    expect(error).toMatchObject({ code: "unavailable", status: 503, retryable: true });
    expect(server.requests).toHaveLength(4);
    // base 100 ms · 2ⁿ, jitter factor 1 (random 0.5).
    for (const [i, gap] of gaps(arrivals).entries()) expect(gap).toBeGreaterThanOrEqual([100, 200, 400][i]! - SLACK_MS);
  });

  it.each([400, 403, 404, 409])("never retries a %i", async (status) => {
    const { server, client } = await serve((_req, res) => sendJson(res, status, { error: "not_found", message: "no" }));
    const error = await caught(client.claim("rst_1"));
    expect(error).toMatchObject({ status, retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it("waits as long as Retry-After asks on a 429", async () => {
    let calls = 0;
    const { client, arrivals } = await serve((_req, res) =>
      ++calls === 1 ? sendJson(res, 429, { error: "rate_limited", message: "slow down" }, { "retry-after": "1" }) : sendJson(res, 200, { items: [] }),
    );
    await expect(client.work()).resolves.toEqual({ items: [] });
    expect(gaps(arrivals)[0]).toBeGreaterThanOrEqual(1_000 - SLACK_MS);
  });

  it("waits until the HTTP date a 503's Retry-After names, then retries", async () => {
    let calls = 0;
    let until = 0;
    const { server, client, arrivals } = await serve((_req, res) => {
      if (++calls > 1) return sendJson(res, 200, { items: [] });
      // An HTTP date has whole seconds: two seconds ahead is at least one second away.
      const date = new Date(Date.now() + 2_000).toUTCString();
      until = Date.parse(date);
      sendJson(res, 503, { error: "unavailable", message: "maintenance" }, { "retry-after": date });
    });
    await expect(client.work()).resolves.toEqual({ items: [] });
    expect(server.requests).toHaveLength(2);
    expect(arrivals[1]).toBeGreaterThanOrEqual(until - SLACK_MS);
  });

  it("sends the current token again on a retry (a token may rotate while it waits)", async () => {
    let calls = 0;
    const server = await startTestServer((_req, res) =>
      ++calls === 1 ? sendJson(res, 503, { error: "unavailable", message: "busy" }) : sendJson(res, 200, { items: [] }),
    );
    servers.push(server);
    let n = 0;
    const token = () =>
      mintRunnerToken({ secret, organizationId: "o", memberId: "m", runnerId: `runner-000${++n}`, capabilities: [], audience: server.url }).token;
    const client = createRunnerClient({ baseUrl: server.url, token, retry: { limit: 1, backoff: { baseMs: 10, maxMs: 10, random: () => 0.5 } } });
    await expect(client.work()).resolves.toEqual({ items: [] });
    const [first, second] = server.requests.map((r) => r.headers.authorization);
    expect(server.requests).toHaveLength(2);
    expect(first).toMatch(/^Bearer /);
    expect(second).not.toEqual(first);
  });

  it("retries network errors, then reports them as retryable", async () => {
    const { server, client } = await serve((req) => {
      req.socket.destroy();
    });
    const error = await caught(client.work());
    expect(error).toMatchObject({ code: "network_error", retryable: true });
    expect(server.requests).toHaveLength(4);
  });

  it("times out a request that hangs", async () => {
    const { client } = await serve(() => new Promise(() => {}));
    const error = await caught(client.heartbeat("rst_1", 1));
    expect(error).toMatchObject({ code: "timeout", retryable: true });
  });
});

describe("runner client answers", () => {
  it("rejects an answer that does not match the schema, without retrying", async () => {
    const { server, client } = await serve((_req, res) => sendJson(res, 200, { items: [{ taskId: 42 }] }));
    const error = await caught(client.work());
    expect(error).toMatchObject({ code: "invalid_response", retryable: false });
    expect(error?.message).toContain("items.0.taskId");
    expect(server.requests).toHaveLength(1);
  });

  it("turns 401 and 403 into a retired credential", async () => {
    for (const status of [401, 403]) {
      const { client } = await serve((_req, res) => sendJson(res, status, { error: "runner_unauthorized", message: "no" }));
      const error = await caught(client.work());
      expect(error?.credentialRetired).toBe(true);
      expect(RunnerProtocolError.isInstance(error)).toBe(true);
    }
  });

  it("refuses to follow a redirect with the token", async () => {
    const { server, client } = await serve((req, res) => {
      if (req.url?.endsWith("/work")) {
        res.writeHead(302, { location: "/elsewhere" });
        res.end();
      } else sendJson(res, 200, { items: [] });
    });
    const error = await caught(client.work());
    expect(RunnerProtocolError.isInstance(error)).toBe(true);
    expect(server.requests.map((r) => r.path).filter((p) => p === "/elsewhere")).toHaveLength(0);
  });

  it("never sends a token to a gateway it was not minted for", async () => {
    const { server } = await serve((_req, res) => sendJson(res, 200, { items: [] }));
    const foreign = mintRunnerToken({
      secret,
      organizationId: "o",
      memberId: "m",
      runnerId: "runner-0001",
      capabilities: [],
      audience: "https://gateway.example.test",
    }).token;
    const client = createRunnerClient({ baseUrl: server.url, token: foreign });
    const error = await caught(client.work());
    expect(error).toMatchObject({ code: "token_audience_mismatch", credentialRetired: true });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses to send an invalid message", async () => {
    const { server, client } = await serve((_req, res) => sendJson(res, 200, {}));
    const bad = { attempt: 1, status: "done", localSessionId: "" } as const;
    await expect(client.complete("rst_1", bad)).rejects.toMatchObject({ code: "invalid_request" });
    expect(server.requests).toHaveLength(0);
  });

  it("sends the current token of a rotating provider on every request", async () => {
    const { server } = await serve((_req, res) => sendJson(res, 200, { items: [] }));
    let n = 0;
    const client = createRunnerClient({
      baseUrl: server.url,
      token: () => mintRunnerToken({ secret, organizationId: "o", memberId: "m", runnerId: `runner-000${++n}`, capabilities: [], audience: server.url }).token,
    });
    await client.work();
    await client.work();
    const [first, second] = server.requests.map((r) => r.headers.authorization);
    expect(first).not.toEqual(second);
  });
});

describe("requestRunnerToken", () => {
  it("registers with the member's credential and gets the known capabilities granted (v1 names read as v1)", async () => {
    const double = await startProtocolDouble();
    try {
      const request = {
        runnerId: "runner-0001",
        name: "Studio Mac",
        platform: "darwin" as const,
        appVersion: "1.2.3",
        protocolVersion: 1,
        capabilities: ["remote_session_v1", "from_the_future_v7"],
      };
      const minted = await requestRunnerToken({ baseUrl: double.baseUrl, memberToken: double.memberToken, request });
      expect(minted.capabilities).toEqual(["session_create_v1"]);
      expect(minted.audience).toBe(double.baseUrl);
      const client = createRunnerClient({ baseUrl: double.baseUrl, token: minted.token });
      await expect(client.work()).resolves.toEqual({ items: [] });
      await expect(requestRunnerToken({ baseUrl: double.baseUrl, memberToken: "wrong", request })).rejects.toMatchObject({
        status: 401,
      });
    } finally {
      await double.close();
    }
  });
});
