import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { createSessionLedger, migrate, silentLogger } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRemoteSessionSource } from "./create-remote-session-source.js";
import { createRemoteSessionEndpoint, type RemoteSessionEndpoint } from "./mcp-endpoint-v2.js";
import { createScriptedTarget, type ScriptedTarget } from "./scripted-target.testing.js";

// The endpoint in process, as a host mounts it: no HTTP server, the clients' requests handed to
// it as Request objects. Both eras from one factory, and a sealed question's state that expires.
const db = useTestDatabase();
const AUTH: AuthInfo = {
  token: "t",
  clientId: "c",
  scopes: ["mcp:read", "mcp:write"],
  extra: { organizationId: "org_e", userId: "user_e", memberId: "mem_e" },
};
let cloud: ScriptedTarget;
let mcp: RemoteSessionEndpoint;
let remembering: RemoteSessionEndpoint;

beforeAll(async () => {
  await migrate(db.current.sql);
  cloud = createScriptedTarget("cloud");
  const source = createRemoteSessionSource({ targets: [cloud], ledger: createSessionLedger(db.current.sql), logger: silentLogger });
  mcp = createRemoteSessionEndpoint({
    source,
    serverInfo: { name: "in-process", version: "1.0.0" },
    elicitation: { secret: "in-process-elicitation-secret-0123456789", ttlSeconds: 1 },
  });
  // A host whose 2025-era sessions remember what their clients declared at initialize (push's do,
  // in PostgreSQL): here every 2025 request's client is taken to elicit forms.
  remembering = createRemoteSessionEndpoint({
    source,
    elicitation: { secret: "in-process-elicitation-secret-0123456789", ttlSeconds: 1 },
    legacy: (stateless) => (request, auth) => stateless(request, { ...auth, extra: { ...auth.extra, mcpClientCapabilities: { elicitation: {} } } }),
  });
});

afterAll(async () => {
  await mcp?.close();
  await remembering?.close();
});

/** A v2 client (pinned to 2026-07-28, or of the default 2025 era) whose requests go straight to the endpoint. */
async function inProcessClient(modern: boolean, onElicit?: () => Promise<{ action: "accept"; content: Record<string, string> }>, endpoint = mcp) {
  const client = new Client(
    { name: "in-process", version: "1.0.0" },
    { ...(modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}), ...(onElicit ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  if (onElicit) client.setRequestHandler("elicitation/create", onElicit);
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), { fetch: async (input, init) => endpoint.endpoint(new Request(input, init), AUTH) }),
  );
  return client;
}

it("serves a 2026-07-28 client and a 2025-era client the same tools and answers, from one factory", async () => {
  const [modern, legacy] = await Promise.all([inProcessClient(true), inProcessClient(false)]);
  expect([modern.getNegotiatedProtocolVersion(), legacy.getNegotiatedProtocolVersion()]).toEqual(["2026-07-28", "2025-11-25"]);
  expect(modern.getServerVersion()).toMatchObject({ name: "in-process" });
  const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  expect(await names(modern)).toEqual(await names(legacy));
  const created = (await modern.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body: { prompt: "hello" } } })) as {
    structuredContent: { sessionId: string };
  };
  const read = async (client: Client) =>
    (
      (await client.callTool({
        name: "execute_capability",
        arguments: { name: "remote-session:read", body: { sessionId: created.structuredContent.sessionId } },
      })) as {
        structuredContent: unknown;
      }
    ).structuredContent;
  expect(await read(modern)).toEqual(await read(legacy));
  await Promise.all([modern.close(), legacy.close()]);
});

it("refuses an answer whose sealed state expired while the human took their time, and changes nothing", async () => {
  const human = await inProcessClient(true, async () => {
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    return { action: "accept", content: { permission: "once" } };
  });
  const created = (await human.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body: { prompt: "ask me" } } })) as {
    structuredContent: { sessionId: string };
  };
  const { sessionId } = created.structuredContent;
  cloud.ask(sessionId, { kind: "permission", id: "per_slow", title: "bash", detail: "make release" });
  await expect(human.callTool({ name: "execute_capability", arguments: { name: "remote-session:read", body: { sessionId, waitMs: 1_000 } } })).rejects.toThrow(
    /Invalid or expired requestState/,
  );
  expect(cloud.sessions.get(sessionId)?.pending?.id).toBe("per_slow");
  await human.close();
});

it("asks a 2025-era client's human on the call's stream when the host remembers it elicits; the answer is respond's", async () => {
  const human = await inProcessClient(false, async () => ({ action: "accept", content: { text: "Blue" } }), remembering);
  const created = (await human.callTool({ name: "execute_capability", arguments: { name: "remote-session:create", body: { prompt: "ask me" } } })) as {
    structuredContent: { sessionId: string };
  };
  const { sessionId } = created.structuredContent;
  cloud.ask(sessionId, { kind: "question", id: "que_colour", title: "Colour", detail: "Which colour?" });
  const read = (await human.callTool({ name: "execute_capability", arguments: { name: "remote-session:read", body: { sessionId, waitMs: 5_000 } } })) as {
    structuredContent: { state: string };
  };
  expect(cloud.sessions.get(sessionId)?.pending).toBeUndefined();
  expect(read.structuredContent.state).not.toBe("waiting_input");
  await human.close();
});
