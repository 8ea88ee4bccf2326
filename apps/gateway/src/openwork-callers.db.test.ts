import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createEchoEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// An agent written against OpenWork's own remote sessions keeps working on this gateway: a desktop
// create answers a `commandId`, a follow-up a `requestId`, read and stop take either in place of
// `sessionId`, and `targets` carries OpenWork's `computers` and `cloud`.
const db = useTestDatabase();
const member = fixedDevMember("callers");
// Another member of the same organization: its receipts are not ours to read.
const other: DevMember = { ...fixedDevMember("callers-other"), organizationId: member.organizationId };
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
let otherClient: Client;

type Result = { isError?: boolean; structuredContent: Record<string, unknown> };
const executeAs = async (client: Client, name: string, body: unknown) =>
  (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as Result;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member, { members: () => [member, other] });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    runnerId: "callers-desktop-0001",
    name: "Callers desktop",
    engine: createEchoEngine(),
  });
  otherClient = new Client({ name: "callers-other", version: "1.0.0" });
  await otherClient.connect(
    new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${other.mcpToken}` } } }),
  );
}, 60_000);

afterAll(async () => {
  await otherClient?.close();
  await runner?.stop();
  await test?.close();
});

/** Reads by `ref` until the session is idle. */
async function readUntilIdle(ref: Record<string, string>) {
  let read: Result | undefined;
  for (let i = 0; i < 40 && read?.structuredContent.state !== "idle"; i++) read = await test.execute("remote-session:read", { ...ref, waitMs: 1_000 });
  return read!.structuredContent;
}

it("reads and stops a desktop session by the commandId its create answered and the requestId of a follow-up", async () => {
  const created = (await test.execute("remote-session:create", { target: "desktop", title: "receipts", prompt: "first" })).structuredContent;
  expect(created).toMatchObject({ target: "desktop", state: "queued", commandId: expect.stringMatching(/^rst_/), sessionId: expect.stringMatching(/^rs_/) });
  const sessionId = created.sessionId as string;
  expect(await readUntilIdle({ commandId: created.commandId as string })).toMatchObject({ sessionId, state: "idle", finalAssistantText: "echo: first" });

  const sent = (await test.execute("remote-session:send", { sessionId, prompt: "second" })).structuredContent;
  expect(sent).toMatchObject({ state: "accepted", requestId: expect.stringMatching(/^rst_/) });
  expect(sent.requestId).not.toBe(created.commandId);
  expect(await readUntilIdle({ requestId: sent.requestId as string })).toMatchObject({ sessionId, finalAssistantText: "echo: second" });

  // A create's id is a command, never a request, and the reverse.
  expect((await test.execute("remote-session:read", { requestId: created.commandId })).structuredContent).toMatchObject({ error: "unknown_request" });
  expect((await test.execute("remote-session:read", { commandId: sent.requestId })).structuredContent).toMatchObject({ error: "unknown_command" });

  // Another member of the organization holding our receipts finds nothing, exactly as for an id nobody has.
  const foreign = (await executeAs(otherClient, "remote-session:stop", { commandId: created.commandId })).structuredContent;
  const nobody = (await executeAs(otherClient, "remote-session:stop", { commandId: "rst_00000000000000000000000000" })).structuredContent;
  expect(foreign).toMatchObject({ error: "unknown_command", retryable: false });
  expect({ ...foreign, referenceId: null, message: null }).toEqual({ ...nobody, referenceId: null, message: null });

  expect((await test.execute("remote-session:stop", { commandId: created.commandId })).structuredContent).toMatchObject({
    sessionId,
    stopped: expect.any(Boolean),
  });
});

it("answers a receipt or session of OpenWork's own remote sessions, made before the switch, as unknown with the step to take", async () => {
  const command = (await test.execute("remote-session:read", { commandId: "rsc_01jz8m3q4c5v6b7n8m9p0q1r2s" })).structuredContent;
  expect(command).toMatchObject({ error: "unknown_command", retryable: false, action: expect.stringContaining("remote-session:list") });
  const request = (await test.execute("remote-session:read", { requestId: "rsr_01jz8m3q4c5v6b7n8m9p0q1r2s" })).structuredContent;
  expect(request).toMatchObject({ error: "unknown_request", retryable: false, action: expect.stringContaining("sessionId") });
  // A desktop session id of OpenWork's runner (`ses_` and 64 hex digits) is not one of ours.
  const session = (await test.execute("remote-session:read", { sessionId: `ses_${"a".repeat(64)}` })).structuredContent;
  expect(session).toMatchObject({ error: "unknown_session", retryable: false });
});

it("lists OpenWork's computers and cloud beside the targets", async () => {
  const targets = (await test.execute("remote-session:targets", {})).structuredContent;
  expect(targets.cloud).toEqual({ available: false });
  expect(targets.computers).toEqual([
    expect.objectContaining({
      computerId: "callers-desktop-0001",
      kind: "desktop",
      appVersion: expect.any(String),
      online: true,
      platform: expect.any(String),
    }),
  ]);
  expect((targets.targets as { name: string }[]).map((t) => t.name)).toContain("desktop");
});
