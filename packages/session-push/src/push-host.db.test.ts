import { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { createWakeHub, type WakeHub } from "@openwork/desktop-target";
import { createEchoTarget } from "@openwork/echo-target";
import { createRemoteSessionSource } from "@openwork/mcp-capability";
import { registerRemoteSessionTools } from "@openwork/mcp-capability/server-v2";
import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, expect, it } from "vitest";
import { createSessionPush, type PushAuth, type SessionPush } from "./index.js";

// A host that is not the reference gateway mounts push on its own stateless MCP 2.x endpoint,
// as the README shows, and a subscriber hears of a session's change on its GET stream.
const db = useTestDatabase();
const auth: PushAuth = {
  token: "host-token",
  clientId: "host",
  scopes: ["mcp:read", "mcp:write"],
  extra: { organizationId: "org_host", userId: "user_host", memberId: "mem_host" },
};
let hub: WakeHub | undefined;
let push: SessionPush | undefined;

afterAll(async () => {
  await push?.close();
  await hub?.close();
});

it("mounts on a host's own MCP endpoint in a few lines, and tells a subscriber of its session's change", async () => {
  const { sql } = db.current;
  await migrate(sql);
  hub = createWakeHub({ sql });
  await hub.ready;
  const source = createRemoteSessionSource({ targets: [createEchoTarget()], ledger: createSessionLedger(sql) });

  // The README's example, as a host writes it.
  push = createSessionPush({ sql, hub, source });
  await push.start();
  const mounted = push;
  const endpoint = push.endpoint(async (request, verified) => {
    const server = new McpServer({ name: "host", version: "1.0.0" }, { capabilities: { tools: {}, resources: {} } });
    registerRemoteSessionTools(server, { source: mounted.source });
    mounted.registerResources(server);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(request, { authInfo: verified });
  });

  const post = async (body: Record<string, unknown>, mcpSessionId?: string) => {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(mcpSessionId ? { "mcp-session-id": mcpSessionId } : {}),
    };
    const response = await endpoint(
      new Request("http://host.test/mcp", { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }) }),
      auth,
    );
    return { response, json: (await response.json()) as Record<string, any> };
  };
  const init = await post({ method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const mcpSessionId = init.response.headers.get("mcp-session-id")!;
  expect(mcpSessionId).toMatch(/^mcps_/);
  expect(init.json.result.capabilities.resources).toMatchObject({ subscribe: true });
  const execute = (name: string, body: Record<string, unknown>) =>
    post({ method: "tools/call", params: { name: "execute_capability", arguments: { name, body } } }, mcpSessionId);
  const sessionId = (await execute("remote-session:create", { target: "echo", prompt: "first" })).json.result.structuredContent.sessionId as string;
  const uri = `remote-session://${sessionId}`;
  expect((await post({ method: "resources/subscribe", params: { uri } }, mcpSessionId)).json).toMatchObject({ result: {} });

  const stream = await endpoint(new Request("http://host.test/mcp", { headers: { accept: "text/event-stream", "mcp-session-id": mcpSessionId } }), auth);
  expect(stream.headers.get("content-type")).toBe("text/event-stream");
  const deadline = Date.now() + 5_000;
  while (push.stats().pushWatchers < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(push.stats()).toEqual({ pushStreams: 1, pushWatchers: 1 });

  // The echo target notifies nothing itself: push's source announces the send on the hub.
  await execute("remote-session:send", { sessionId, prompt: "second" });
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!/data: .*\n\n/.test(text)) text += decoder.decode((await reader.read()).value, { stream: true });
  expect(JSON.parse(/data: (.*)\n\n/.exec(text)![1]!)).toEqual({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
  await reader.cancel();
  expect(push.stats().pushStreams).toBe(0);
});
