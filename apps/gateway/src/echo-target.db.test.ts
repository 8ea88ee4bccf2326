import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

const db = useTestDatabase();
const member = fixedDevMember("echo");
let gateway: Awaited<ReturnType<typeof serveGateway>>;
let sql: postgres.Sql;
let client: Client;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
  gateway = await serveGateway({ sql, port: 0, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: "echo-runner-secret-0123456789abcdef", echoTarget: true });
  client = new Client({ name: "echo-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await gateway?.close();
  await sql?.end({ timeout: 5 });
});

type Result = { isError?: boolean; structuredContent: Record<string, unknown> };
const execute = async (name: string, body: unknown) => (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as Result;

it("serves a third target the capability knows only through the port, end to end through execute_capability", async () => {
  const search = (await client.callTool({ name: "search_capabilities", arguments: { query: "create remote session" } })) as Result;
  const create = (search.structuredContent.matches as { name: string; argumentsSchema: { properties: { target: { enum: string[] } } } }[]).find((m) => m.name === "remote-session:create")!;
  expect(create.argumentsSchema.properties.target.enum).toContain("echo");

  const targets = await execute("remote-session:targets", {});
  expect(targets.structuredContent.targets).toContainEqual(expect.objectContaining({ name: "echo", label: "Echo", available: true }));

  const created = await execute("remote-session:create", { target: "echo", title: "Echo test", prompt: "hello echo" });
  expect(created.isError).toBeUndefined();
  expect(created.structuredContent).toMatchObject({ target: "echo", state: "idle", targetLabel: "Echo" });
  const sessionId = String(created.structuredContent.sessionId);
  const read = await execute("remote-session:read", { sessionId });
  expect(read.structuredContent).toMatchObject({ state: "idle", finalAssistantText: "echo: hello echo" });
  const sent = await execute("remote-session:send", { sessionId, prompt: "again" });
  expect(sent.structuredContent).toMatchObject({ state: "accepted", alreadyPresent: false });
  const next = await execute("remote-session:read", { sessionId, cursor: read.structuredContent.cursor });
  expect((next.structuredContent.messages as { text: string }[]).map((m) => m.text)).toEqual(["again", "echo: again"]);
  // A desktop-only argument is refused for it, naming the argument.
  expect((await execute("remote-session:create", { target: "echo", deliverBy: new Date(Date.now() + 60_000).toISOString() })).structuredContent).toMatchObject({
    error: "invalid_capability_arguments",
    issues: [expect.objectContaining({ path: "deliverBy" })],
  });
  const listed = await execute("remote-session:list", { target: "echo" });
  expect((listed.structuredContent.sessions as { sessionId: string }[]).map((s) => s.sessionId)).toContain(sessionId);
});
