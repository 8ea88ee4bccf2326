import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { ASKED, createAskingEngine } from "./testing/asking-engine.js";
import { type Posted, repost } from "./testing/reposted.js";
import { startTestGateway } from "./testing/test-gateway.js";

// The human answers in the client's own UI (MCP 2026-07-28 elicitation): a waiting read that meets
// a session's question comes back `input_required`; the client asks its human and retries with the
// answer and the gateway's sealed state; the answer goes through respond.
const db = useTestDatabase();
const alice = fixedDevMember("elicit_alice");
const bob = fixedDevMember("elicit_bob");
const asking = createAskingEngine();
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, alice, { members: () => [alice, bob] });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "elicit-desktop-0001",
    name: "Elicit desktop",
    engine: asking.engine,
  });
  while (test.gateway.hub.stats().runnerStreams < 1) await new Promise((resolve) => setTimeout(resolve, 50));
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
});

type ElicitReply = { action: "accept"; content: Record<string, string> } | { action: "decline" | "cancel" };

/** A 2026-07-28 client of `who` whose human answers each elicitation with `reply`, recording what it posts. */
async function clientWithHuman(who: DevMember, reply: (message: string) => ElicitReply, capabilities: Record<string, unknown> = { elicitation: { form: {} } }) {
  const posted: Posted[] = [];
  const asked: { message: string; schema: unknown }[] = [];
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") posted.push({ headers: new Headers(init.headers), body: JSON.parse(init.body) });
    return fetch(input, init);
  };
  const client = new Client({ name: "elicit-test", version: "1.0.0" }, { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  if ("elicitation" in capabilities)
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      asked.push({ message: params.message, schema: params.requestedSchema });
      return reply(params.message);
    });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(test.gateway.mcpUrl), {
      fetch: recording,
      requestInit: { headers: { Authorization: `Bearer ${who.mcpToken}` } },
    }),
  );
  const execute = async (name: string, body: Record<string, unknown>) =>
    (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as { isError?: boolean; structuredContent: Record<string, any> };
  return { client, posted, asked, execute };
}

/** A desktop session of Alice's waiting on what `prompt` makes the engine ask; its read. */
async function waitingSession(prompt: string) {
  const created = await test.execute("remote-session:create", { target: "desktop", prompt });
  const sessionId = String(created.structuredContent.sessionId);
  for (;;) {
    const read = await test.execute("remote-session:read", { sessionId, waitMs: 2_000, from: "end" });
    if (read.structuredContent.state === "waiting_input") return { sessionId, read: read.structuredContent as Record<string, any> };
  }
}

/** The round that carried the human's answer (its `requestState`), as the client posted it. */
const answerRound = (posted: Posted[]) => posted.find((p) => p.body?.method === "tools/call" && p.body.params?.requestState)!;

/** Posts `body` as `who`, with the headers the client sent `round` with. */
const repostAs = (round: Posted, who: DevMember, body: unknown) => repost(test.gateway.mcpUrl, round, who, body);

describe("a waiting read that meets a session's question, from a client that declared elicitation", () => {
  let replayable: Posted;

  it("asks the human in the client's UI; accepted, the answer goes through respond once and the turn goes on", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: deploy");
    const human = await clientWithHuman(alice, () => ({ action: "accept", content: { permission: "once" } }));
    const before = asking.answers.length;
    const result = await human.execute("remote-session:read", { sessionId, waitMs: 5_000 });
    expect(human.asked).toHaveLength(1);
    expect(human.asked[0]!.message).toContain(ASKED.command);
    expect(asking.answers.slice(before)).toEqual([{ requestId: read.pending.id, answer: { permission: "once" } }]);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.state).not.toBe("waiting_input");
    // The round that answered carried the sealed state; the first round carried none.
    replayable = answerRound(human.posted);
    expect(replayable.body.params.inputResponses.answer).toMatchObject({ action: "accept" });
    const done = await test.execute("remote-session:read", { sessionId, waitMs: 5_000, from: "end" });
    expect(JSON.stringify(done.structuredContent)).toContain("answered:");
    await human.client.close();
  });

  it("refuses the same answer replayed: the question was answered once, and is not answered again", async () => {
    const before = asking.answers.length;
    const replayed = await (await repostAs(replayable, alice, { ...replayable.body, id: 9_001 })).json();
    expect(replayed.result).toMatchObject({ isError: true, structuredContent: { error: "input_not_pending" } });
    expect(asking.answers.length).toBe(before);
  });

  it("refuses state that was altered, or that another member presents, before anything runs", async () => {
    const state: string = replayable.body.params.requestState;
    const altered = `${state.slice(0, -2)}${state.at(-2) === "A" ? "B" : "A"}${state.at(-1)}`;
    for (const [who, requestState] of [
      [alice, altered],
      [bob, state],
    ] as const) {
      const refused = await (await repostAs(replayable, who, { ...replayable.body, id: 9_002, params: { ...replayable.body.params, requestState } })).json();
      expect(refused.error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    }
  });

  it("keeps today's waiting_input and respond for a human who declines, or a question answered in text", async () => {
    const { sessionId, read } = await waitingSession("ASK_COLOUR: button");
    const declining = await clientWithHuman(alice, () => ({ action: "decline" }));
    const declined = await declining.execute("remote-session:read", { sessionId, waitMs: 1_000 });
    expect(declining.asked).toHaveLength(1);
    expect(declined.structuredContent).toMatchObject({ state: "waiting_input", pending: { id: read.pending.id }, next: { name: "remote-session:respond" } });
    await declining.client.close();

    const answering = await clientWithHuman(alice, () => ({ action: "accept", content: { text: "Turquoise" } }));
    const before = asking.answers.length;
    await answering.execute("remote-session:read", { sessionId, waitMs: 5_000 });
    expect(answering.asked[0]!.message).toContain(ASKED.question);
    expect(asking.answers.slice(before)).toEqual([{ requestId: read.pending.id, answer: { text: "Turquoise" } }]);
    await answering.client.close();
  });

  it("asks nobody for a client that did not declare elicitation: waiting_input and respond as before", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: nobody");
    const plain = await clientWithHuman(alice, () => ({ action: "cancel" }), {});
    const result = await plain.execute("remote-session:read", { sessionId, waitMs: 500 });
    expect(result.structuredContent).toMatchObject({ state: "waiting_input", next: { name: "remote-session:respond" } });
    await plain.client.close();
    await test.execute("remote-session:respond", { sessionId, requestId: read.pending.id, answer: { permission: "reject" } });
  });
});
