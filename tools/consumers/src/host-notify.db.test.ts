import { createHmac, timingSafeEqual } from "node:crypto";
import { cp } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPABILITY_WITH_TARGETS, type ConsumerFolder, installConsumer } from "./consumer-folder.js";
import { type RunningProcess, startNodeProcess } from "./host-process.js";
// The test process may use the workspace: the reference gateway's receiver, not a copy of it.
import { startWebhookReceiver, type WebhookReceiver } from "../../../apps/gateway/src/testing/webhook-receiver.js";

// Notifications and spawned sessions through the host package, as a user installs it: the
// tarballs installed by npm beside Hono, its Node server, the MCP server SDK, zod and postgres; the
// fixture host compiled by TypeScript (strict) against the published declarations, then run as
// its own process (only the tarballs reachable) against the witness worker's echo engine. The
// test speaks to it over HTTP only, as a member's app, a member's agent and a webhook receiver do.
const db = useTestDatabase();
const PACKAGES = [...CAPABILITY_WITH_TARGETS, "session-push", "session-notify", "remote-session-host"];
const THIRD_PARTY = ["zod", "postgres", "ky", "eventsource-parser", "hono", "@hono/node-server", "@modelcontextprotocol/server", "@types/node"];
const FIXTURE = new URL("../fixtures/host-notify/", import.meta.url);
// The fixture's member table (fixtures/host-notify/src/members.ts).
const ADA = { sessionToken: "session-token-ada-0123456789", mcpToken: "mcp-token-ada-0123456789", userId: "user_ada", organizationId: "org_notify" };
const QUESTION = "Which colour should the button be?";
let folder: ConsumerFolder;
let witness: RunningWitness;
let hooks: WebhookReceiver;
let fixture: string;

beforeAll(async () => {
  [folder, witness, hooks] = await Promise.all([
    installConsumer(PACKAGES, THIRD_PARTY),
    startWitnessWorker({ clientToken: "client-token-notify", hostToken: "host-token-notify", gatewayKey: "gateway-key-notify", echo: { replyDelayMs: 20 } }),
    startWebhookReceiver(),
  ]);
  fixture = join(folder.dir, "host-notify");
  await cp(FIXTURE, fixture, { recursive: true });
});
afterAll(async () => {
  await hooks?.close();
  await witness?.close();
  await folder?.remove();
});

it("compiles against the published declarations (strict)", async () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = await folder.node([tsc, "-p", join(fixture, "tsconfig.json")]).catch((error: { stdout: string }) => error);
  expect(result.stdout).toBe("");
});

describe("the host, running from the tarballs", () => {
  let host: RunningProcess<{ url: string; mcpPath: string; answerPath: string }>;
  let url: string;

  beforeAll(async () => {
    host = await startNodeProcess(fixture, [join(fixture, "dist", "main.js")], {
      DATABASE_URL: db.current.url,
      RESOLVER_URL: witness.resolverUrl,
      GATEWAY_KEY: "gateway-key-notify",
    });
    url = host.ready.url;
  });
  afterAll(async () => {
    // It stops cleanly on SIGTERM (the drain, the cloud's streams and the hub closed, sql ended).
    const code = await host?.stop();
    if (host) expect(code, host.output()).toBe(0);
  });

  /** `execute_capability` on the host's MCP endpoint, as an MCP client with `token` calls it (JSON-RPC over POST). */
  let rpcId = 0;
  const execute = async (token: string, name: string, body: Record<string, unknown>) => {
    const response = await fetch(`${url}${host.ready.mcpPath}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params: { name: "execute_capability", arguments: { name, body } } }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const answer = (await response.json()) as { result?: { isError?: boolean; structuredContent?: Payload }; error?: unknown };
    if (!answer.result) throw new Error(`${name}: ${JSON.stringify(answer)}`);
    return { isError: answer.result.isError === true, payload: answer.result.structuredContent ?? {} };
  };
  const ok = async (name: string, body: Record<string, unknown>): Promise<Payload> => {
    const { isError, payload } = await execute(ADA.mcpToken, name, body);
    if (isError) throw new Error(`${name} failed: ${JSON.stringify(payload)}`);
    return payload;
  };
  const readUntil = async (sessionId: string, done: (read: Payload) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const read = await ok("remote-session:read", { sessionId, waitMs: 1_000, from: "end" });
      if (done(read)) return read;
      if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${read.state}: ${JSON.stringify(read).slice(0, 800)}\n${host.output()}`);
    }
  };

  it("serves its MCP endpoint behind the auth hook: no token, or a member's sign-in token, is refused with the resource metadata", async () => {
    const post = (authorization?: string) =>
      fetch(`${url}${host.ready.mcpPath}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    for (const refused of [await post(), await post(`Bearer ${ADA.sessionToken}`)]) {
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain(`resource_metadata="${url}/.well-known/oauth-protected-resource${host.ready.mcpPath}"`);
    }
    const metadata = await (await fetch(`${url}/.well-known/oauth-protected-resource${host.ready.mcpPath}`)).json();
    expect(metadata).toMatchObject({ resource: `${url}${host.ready.mcpPath}` });
    // The member routes take the sign-in token only: an MCP token (an agent's) never reaches them.
    const withMcpToken = await fetch(`${url}/member/notify/channels`, { headers: { authorization: `Bearer ${ADA.mcpToken}` } });
    expect(withMcpToken.status).toBe(401);
  });

  it("serves a client of MCP 2026-07-28 and a 2025-era client on the one endpoint, with the same tools and answers", async () => {
    const connect = async (versionNegotiation?: { mode: { pin: string } }) => {
      const client = new Client({ name: "host-notify-test", version: "1.0.0" }, versionNegotiation ? { versionNegotiation } : {});
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}${host.ready.mcpPath}`), { requestInit: { headers: { Authorization: `Bearer ${ADA.mcpToken}` } } }),
      );
      return client;
    };
    const [modern, legacy] = await Promise.all([connect({ mode: { pin: "2026-07-28" } }), connect()]);
    try {
      expect([modern.getNegotiatedProtocolVersion(), legacy.getNegotiatedProtocolVersion()]).toEqual(["2026-07-28", "2025-11-25"]);
      expect(modern.getServerVersion()).toMatchObject({ name: "host-notify" });
      const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(await names(modern)).toEqual(await names(legacy));
      const targets = async (client: Client) => {
        const { structuredContent, content } = await client.callTool({ name: "execute_capability", arguments: { name: "remote-session:targets", body: {} } });
        return { structuredContent, content };
      };
      expect(await targets(modern)).toEqual(await targets(legacy));
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });

  describe("a session that asks the human", () => {
    let secret: string;
    let sessionId: string;
    let answerUrl: string;

    it("notifies the member's webhook channel, signed, with an answer link", async () => {
      const created = await fetch(`${url}/member/notify/channels`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADA.sessionToken}`, "content-type": "application/json" },
        body: JSON.stringify({ kind: "webhook", target: hooks.url("/ada"), eventKinds: ["waiting_input"], allowText: true }),
      });
      expect(created.status).toBe(201);
      const channel = (await created.json()) as { channel: Payload; secret: string };
      expect(channel.secret).toMatch(/^whsec_/);
      secret = channel.secret;
      const listed = (await (await fetch(`${url}/member/notify/channels`, { headers: { authorization: `Bearer ${ADA.sessionToken}` } })).json()) as Payload;
      expect(listed.channels).toEqual([expect.objectContaining({ id: channel.channel.id, kind: "webhook", allowText: true })]);

      const session = await ok("remote-session:create", { target: "cloud", title: "Button colour", prompt: "ASKQ pick the button's colour" });
      sessionId = session.sessionId;
      const waiting = await readUntil(sessionId, (read) => read.state === "waiting_input");
      expect(waiting.pending).toMatchObject({ kind: "question" });

      await hooks.until((received) => received.some((hook) => hook.path === "/ada" && hook.body.includes(sessionId)));
      const hook = hooks.received.find((h) => h.path === "/ada" && h.body.includes(sessionId))!;
      // Standard Webhooks: the id, the timestamp and an HMAC of both and the body, with the channel's secret.
      expect(verifyStandardWebhook(secret, hook.headers, hook.body)).toBe(true);
      expect(verifyStandardWebhook(`whsec_${Buffer.from("another secret of thirty-two byte").toString("base64")}`, hook.headers, hook.body)).toBe(false);
      const sent = JSON.parse(hook.body) as { type: string; data: Payload };
      expect(sent.type).toBe("session.waiting_input");
      expect(sent.data).toMatchObject({ kind: "waiting_input", sessionId, title: "Button colour", state: "waiting_input", memberId: ADA.userId });
      expect(sent.data.text).toEqual({ question: expect.stringContaining(QUESTION) });
      expect(sent.data.answerUrl).toMatch(new RegExp(`^${url}${host.ready.answerPath}/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
      answerUrl = sent.data.answerUrl;
      // While it waits, the agent's read shows the member was told (once the drain has marked the webhook sent).
      let read: Payload = {};
      for (let i = 0; i < 50 && !read.notified; i++) {
        read = await ok("remote-session:read", { sessionId, from: "end", limit: 1 });
        if (!read.notified) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(read.notified).toEqual([{ channel: "webhook", at: expect.any(String), kind: "waiting_input" }]);
    }, 60_000);

    it("the answer link opens the page, and the page's form answers the request: the session runs on", async () => {
      const page = await fetch(answerUrl);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      const html = await page.text();
      expect(html).toContain(QUESTION);
      expect(html).toContain("Button colour");
      const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
      const hidden = hiddenFields(html);
      expect(Object.keys(hidden).sort()).toEqual(["antiForgery", "nonce"]);

      // Without the page's cookie (a form posted from elsewhere): refused, and the link stays usable.
      const forged = await postForm(answerUrl, { ...hidden, choice: "Red" });
      expect(forged.status).toBe(403);
      expect((await ok("remote-session:read", { sessionId })).state).toBe("waiting_input");

      const answered = await postForm(answerUrl, { ...hidden, choice: "Blue" }, cookie);
      expect(answered.status).toBe(200);
      expect(await answered.text()).toContain("Your answer was sent");
      const done = await readUntil(sessionId, (read) => read.state === "idle" && read.finalAssistantText !== undefined);
      expect(done.finalAssistantText).toContain(`"${QUESTION}"="Blue"`);
      expect(done.pending).toBeUndefined();

      // The link is spent: the page and its form again are refused.
      expect((await fetch(answerUrl)).status).toBe(410);
      expect((await postForm(answerUrl, { ...hidden, choice: "Red" }, cookie)).status).toBe(410);
      // The answer's text never reached the host's log.
      const outbox = (await (await fetch(`${url}/test/outbox`)).json()) as { stats: Payload; log: string[] };
      expect(outbox.log.join("\n")).not.toContain("Blue");
      expect(outbox.stats).toMatchObject({ sent: expect.any(Number) });
      expect(outbox.stats.sent).toBeGreaterThanOrEqual(1);
    }, 60_000);
  });

  it("a session's engine creates a child session through the host's MCP endpoint with its own session credential", async () => {
    const body = { target: "cloud", title: "Child", prompt: "hello from the parent" };
    const parent = await ok("remote-session:create", {
      target: "cloud",
      title: "Coordinator",
      prompt: `Delegate this.\nCAPABILITY ${JSON.stringify({ name: "remote-session:create", body })}`,
    });
    const done = await readUntil(parent.sessionId, (read) => read.state === "idle" && read.finalAssistantText !== undefined, 60_000);
    // The engine called the host's tool and got its answer, not an error.
    expect(done.finalAssistantText).toContain("the tool said");
    expect(done.finalAssistantText).not.toContain("MCP error");

    const listed = await ok("remote-session:list", { spawnedBy: parent.sessionId });
    expect(listed.sessions).toEqual([expect.objectContaining({ title: "Child", spawnedBy: parent.sessionId, depth: 1, target: "cloud" })]);
    const childId = listed.sessions[0].sessionId as string;
    expect(done.finalAssistantText).toContain(childId);
    const child = await readUntil(childId, (read) => read.state === "idle" && read.finalAssistantText !== undefined);
    expect(child).toMatchObject({ spawnedBy: { sessionId: parent.sessionId, title: "Coordinator" }, depth: 1 });
    expect(child.finalAssistantText).toContain("hello from the parent");
    expect((await ok("remote-session:read", { sessionId: parent.sessionId })).spawned).toEqual([expect.objectContaining({ sessionId: childId })]);

    // The call carried the session's own credential (issued by the host), not the member's MCP token.
    const calls = witness.mcpCalls().filter((call) => call.tool === "execute_capability");
    expect(calls.length).toBeGreaterThanOrEqual(1);
    const authorization = calls.at(-1)!.authorization!;
    expect(authorization).toMatch(/^Bearer /);
    expect(authorization).not.toContain(ADA.mcpToken);
    // That credential is the parent's: what it creates is the parent's child, even when the member calls with it directly.
    const again = await execute(authorization.slice("Bearer ".length), "remote-session:create", { target: "cloud", title: "Second child" });
    expect(again.isError).toBe(false);
    const children = await ok("remote-session:list", { spawnedBy: parent.sessionId });
    expect(children.sessions.map((s: Payload) => s.title).sort()).toEqual(["Child", "Second child"]);
    // A forged credential is refused by the auth hook.
    const forged = await fetch(`${url}${host.ready.mcpPath}`, {
      method: "POST",
      headers: { authorization: `${authorization}x`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(forged.status).toBe(401);
  }, 90_000);
});

type Payload = Record<string, any>;

/** The page's hidden inputs (`<input type="hidden" name="…" value="…">`), unescaped. */
function hiddenFields(html: string): Record<string, string> {
  const unescapeHtml = (value: string) =>
    value
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  return fields;
}

/** Posts the page's form as a browser does (urlencoded), with the page's cookie when given. */
function postForm(target: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(target, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

/** A Standard Webhooks signature check: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's key. */
function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers["webhook-id"] ?? "");
  const timestamp = String(headers["webhook-timestamp"] ?? "");
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = Buffer.from(createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64"));
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .some((signature) => {
      const [version, value] = signature.split(",");
      const given = Buffer.from(value ?? "");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}
