import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, fixedDevMember("echo"), { echoTarget: true });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

type Result = Awaited<ReturnType<typeof test.execute>>;
const execute = (name: string, body: unknown) => test.execute(name, body);

it("serves a third target the capability knows only through the port, end to end through execute_capability", async () => {
  const search = (await test.client.callTool({ name: "search_capabilities", arguments: { query: "create remote session" } })) as Result;
  const create = (search.structuredContent.matches as { name: string; argumentsSchema: { properties: { target: { enum: string[] } } } }[]).find(
    (m) => m.name === "remote-session:create",
  )!;
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
