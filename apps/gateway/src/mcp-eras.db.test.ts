import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// One endpoint for both MCP eras: what a 2026-07-28 client sends and gets, beside a 2025 client.
const db = useTestDatabase();
const alice = fixedDevMember("alice");
// Held to its requests in flight in the last test: a member of its own, so no other test's client counts.
const carol = fixedDevMember("carol");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, alice, { echoTarget: true, members: () => [alice, carol], memberLimits: { mcpRequestsInFlight: 2 } });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

interface Exchange {
  method: string;
  requestHeaders: Headers;
  body: unknown;
  status: number;
  responseHeaders: Headers;
}

/** The v2 client (pinned to 2026-07-28 unless `mode` says otherwise) as `who`, recording every HTTP exchange it makes. */
async function modernClient(who: DevMember, options: { mode?: "auto" | { pin: string }; headers?: Record<string, string>; connect?: boolean } = {}) {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    exchanges.push({
      method: String(init?.method ?? "GET"),
      requestHeaders: new Headers(init?.headers),
      body,
      status: response.status,
      responseHeaders: response.headers,
    });
    return response;
  };
  const client = new Client({ name: "era-test", version: "1.0.0" }, { versionNegotiation: { mode: options.mode ?? { pin: "2026-07-28" } } });
  const transport = new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), {
    fetch: recording,
    requestInit: { headers: { Authorization: `Bearer ${who.mcpToken}`, ...options.headers } },
  });
  const connected = options.connect === false ? null : await client.connect(transport);
  return { client, transport, exchanges, connected };
}

type Result = { isError?: boolean; structuredContent: Record<string, unknown> };
const execute = async (client: Client, name: string, body: unknown) =>
  (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as unknown as Result;

describe("a client of MCP 2026-07-28", () => {
  it("discovers the server with server/discover, then sends self-contained requests: no initialize, no session id", async () => {
    const { client, exchanges } = await modernClient(alice);
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(["execute_capability", "search_capabilities"]);
    const methods = exchanges.map((exchange) => (exchange.body as { method?: string } | null)?.method);
    expect(methods[0]).toBe("server/discover");
    expect(methods).not.toContain("initialize");
    for (const exchange of exchanges) {
      expect(exchange.status).toBe(200);
      expect(exchange.requestHeaders.get("mcp-session-id")).toBeNull();
      expect(exchange.responseHeaders.get("mcp-session-id")).toBeNull();
    }
    await client.close();
  });

  it("runs a session through execute_capability exactly as a 2025 client does, each client reading the other's session", async () => {
    const { client } = await modernClient(alice);
    const created = await execute(client, "remote-session:create", { target: "echo", title: "Both eras", prompt: "hello modern" });
    expect(created.structuredContent).toMatchObject({ target: "echo", state: "idle" });
    const sessionId = String(created.structuredContent.sessionId);
    const fromModern = await execute(client, "remote-session:read", { sessionId });
    const fromLegacy = await test.execute("remote-session:read", { sessionId });
    expect(fromModern.structuredContent).toMatchObject({ state: "idle", finalAssistantText: "echo: hello modern" });
    expect(fromModern.structuredContent).toEqual(fromLegacy.structuredContent);
    const search = (await client.callTool({ name: "search_capabilities", arguments: { query: "create remote session" } })) as unknown as Result;
    const legacySearch = (await test.client.callTool({ name: "search_capabilities", arguments: { query: "create remote session" } })) as unknown as Result;
    expect(search.structuredContent).toEqual(legacySearch.structuredContent);
    await client.close();
  });

  it("reads the card and the skill in both eras alike", async () => {
    const { client } = await modernClient(alice);
    const modern = await client.listResources();
    const legacy = await test.client.listResources();
    expect(modern.resources.map((r) => r.uri).sort()).toEqual(legacy.resources.map((r) => r.uri).sort());
    const card = modern.resources.find((r) => r.uri.startsWith("ui://"));
    expect(card).toBeDefined();
    const [modernCard, legacyCard] = await Promise.all([client.readResource({ uri: card!.uri }), test.client.readResource({ uri: card!.uri })]);
    expect(modernCard.contents).toEqual(legacyCard.contents);
    await client.close();
  });

  it("negotiates 2026-07-28 on auto, while a client of the default (2025) era still initializes and gets a session", async () => {
    const auto = await modernClient(alice, { mode: "auto" });
    expect(auto.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    await auto.client.close();
    const legacy = new Client({ name: "era-test-2025", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${alice.mcpToken}` } },
    });
    await legacy.connect(transport);
    expect(legacy.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    // Push is on in the reference gateway: the 2025 client's session is a stateful one.
    expect(transport.sessionId).toMatch(/.+/);
    await legacy.close();
  });

  it("is refused with 401 and the protected-resource metadata without a valid token, as a 2025 client is", async () => {
    const stranger: DevMember = { ...alice, mcpToken: "mcp_not_a_member_token_0123456789" };
    const { client, transport, exchanges } = await modernClient(stranger, { connect: false });
    await expect(client.connect(transport)).rejects.toThrow();
    const refused = exchanges[0]!;
    expect(refused.status).toBe(401);
    expect((refused.body as { method: string }).method).toBe("server/discover");
    expect(refused.responseHeaders.get("www-authenticate")).toContain(
      `resource_metadata="${test.gateway.baseUrl}/.well-known/oauth-protected-resource/mcp/agent"`,
    );
  });

  it("is refused with 403 from a foreign Origin, as a 2025 client is", async () => {
    const { client, transport, exchanges } = await modernClient(alice, { connect: false, headers: { Origin: "https://elsewhere.example" } });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(exchanges[0]!.status).toBe(403);
  });

  it("counts against the member's requests in flight: past the limit a request is refused with 429, in either era", async () => {
    const { client } = await modernClient(carol);
    const created = await execute(client, "remote-session:create", { target: "echo", title: "Waits", prompt: "hold" });
    const sessionId = String(created.structuredContent.sessionId);
    const { cursor } = (await execute(client, "remote-session:read", { sessionId })).structuredContent;
    // Two waiting reads hold the member's two slots (nothing changes: each waits its whole waitMs).
    const waiting = [0, 1].map(() => execute(client, "remote-session:read", { sessionId, cursor, waitMs: 2_000 }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(client.listTools()).rejects.toThrow(/rate_limited/);
    // A 2025-era request of the same member: refused alike, before any server is built for it.
    const legacy = await fetch(test.gateway.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${carol.mcpToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(legacy.status).toBe(429);
    expect(await legacy.json()).toMatchObject({ error: "rate_limited", retryAfterMs: expect.any(Number) });
    await Promise.all(waiting);
    expect((await client.listTools()).tools).toHaveLength(2);
    await client.close();
  });
});
