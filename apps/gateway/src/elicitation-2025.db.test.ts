import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startDesktopRunner } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";
import { ASKED, createAskingEngine } from "./testing/asking-engine.js";
import type { Replica } from "./testing/push-replicas.js";
import { type Posted, repost } from "./testing/reposted.js";

// The human answers in the client's own UI, in the 2025 era: a client that declared elicitation at
// `initialize` and waits on a session that asks gets `elicitation/create` on its call's stream; its
// reply (a JSON-RPC response, posted to whichever replica) goes through respond, and the read goes
// on. Two replicas share one PostgreSQL; the desktop reaches the gateway through the first.
const db = useTestDatabase();
const alice = fixedDevMember("elicit25_alice");
const bob = fixedDevMember("elicit25_bob");
const asking = createAskingEngine();
let sql: postgres.Sql;
let a: Replica;
let b: Replica;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
let plain: Awaited<ReturnType<typeof legacyClient>>;

const serve = () =>
  serveGateway({ sql, port: 0, members: () => [alice, bob], cloudEnabled: () => false, runnerTokenSecret: "elicit25-runner-secret-0123456789abcdef" });

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  a = await serve();
  b = await serve();
  runner = await startDesktopRunner({
    gatewayUrl: a.baseUrl,
    memberToken: alice.sessionToken,
    runnerId: "elicit25-desktop-0001",
    name: "Elicit desktop",
    engine: asking.engine,
  });
  while (a.hub.stats().runnerStreams < 1) await new Promise((resolve) => setTimeout(resolve, 50));
  plain = await legacyClient(alice, { capabilities: {} });
}, 60_000);

afterAll(async () => {
  await plain?.client.close();
  await runner?.stop();
  await a?.close();
  await b?.close();
  await sql?.end({ timeout: 5 });
});

type Reply = { action: "accept"; content: Record<string, string> } | { action: "decline" | "cancel" };
interface Reposted extends Posted {
  url: string;
  status: number;
  contentType: string | null;
}

/**
 * The v2 client at its default (the 2025 era) as `who` on replica a, declaring `capabilities`; its
 * human answers each elicitation with `reply`, and its replies go to `repliesTo` (default a).
 */
async function legacyClient(who: DevMember, options: { capabilities?: Record<string, unknown>; reply?: () => Reply; repliesTo?: Replica } = {}) {
  const { capabilities = { elicitation: { form: {} } }, reply = () => ({ action: "cancel" }) as Reply, repliesTo = a } = options;
  const posted: Reposted[] = [];
  const asked: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    const isReply = body !== undefined && body.method === undefined && "result" in body;
    const url = isReply ? repliesTo.mcpUrl : String(input);
    const response = await fetch(url, init);
    if (body !== undefined)
      posted.push({ url, headers: new Headers(init?.headers), body, status: response.status, contentType: response.headers.get("content-type") });
    return response;
  };
  const client = new Client({ name: "elicit25-test", version: "1.0.0" }, { capabilities });
  if ("elicitation" in capabilities)
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push((request.params as { message: string }).message);
      return reply();
    });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(a.mcpUrl), { fetch: recording, requestInit: { headers: { Authorization: `Bearer ${who.mcpToken}` } } }),
  );
  const execute = async (name: string, body: Record<string, unknown>) =>
    (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as { isError?: boolean; structuredContent: Record<string, any> };
  const replies = () => posted.filter((p) => typeof p.body?.id === "string" && p.body.method === undefined);
  return { client, posted, asked, execute, replies };
}

/** A desktop session of Alice's waiting on what `prompt` makes the engine ask; its read. */
async function waitingSession(prompt: string) {
  const created = await plain.execute("remote-session:create", { target: "desktop", prompt });
  const sessionId = String(created.structuredContent.sessionId);
  for (;;) {
    const read = await plain.execute("remote-session:read", { sessionId, waitMs: 2_000, from: "end" });
    if (read.structuredContent.state === "waiting_input") return { sessionId, read: read.structuredContent };
  }
}

describe("a 2025-era client that declared elicitation, waiting on a session that asks", () => {
  let accepted: Reposted;

  it("is asked on its call's stream; accepted, the answer goes through respond once and the read goes on", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: deploy");
    const human = await legacyClient(alice, { reply: () => ({ action: "accept", content: { permission: "once" } }) });
    const before = asking.answers.length;
    const result = await human.execute("remote-session:read", { sessionId, waitMs: 10_000 });
    expect(human.asked).toHaveLength(1);
    expect(human.asked[0]).toContain(ASKED.command);
    expect(asking.answers.slice(before)).toEqual([{ requestId: read.pending.id, answer: { permission: "once" } }]);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.state).not.toBe("waiting_input");
    accepted = human.replies()[0]!;
    expect(accepted).toMatchObject({ status: 202, body: { result: { action: "accept" } } });
    // The call that asked was answered as a stream (the question travelled on it).
    expect(human.posted.find((p) => p.body.method === "tools/call")?.contentType).toContain("text/event-stream");
    await human.client.close();
  });

  it("takes the reply on another replica: answered there, the waiting read here goes on at once", async () => {
    const { sessionId, read } = await waitingSession("ASK_COLOUR: banner");
    const human = await legacyClient(alice, { reply: () => ({ action: "accept", content: { text: "Teal" } }), repliesTo: b });
    const before = asking.answers.length;
    const started = Date.now();
    const result = await human.execute("remote-session:read", { sessionId, waitMs: 15_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(human.asked[0]).toContain(ASKED.question);
    expect(human.replies()).toEqual([expect.objectContaining({ url: b.mcpUrl, status: 202 })]);
    expect(asking.answers.slice(before)).toEqual([{ requestId: read.pending.id, answer: { text: "Teal" } }]);
    expect(result.structuredContent.state).not.toBe("waiting_input");
    await human.client.close();
  });

  it("refuses a replayed reply (409 input_not_pending), another member's or an altered one (400), answering nothing", async () => {
    const before = asking.answers.length;
    const replayed = await repost(b.mcpUrl, accepted, alice, accepted.body);
    expect(replayed.status).toBe(409);
    expect(await replayed.json()).toMatchObject({ error: "input_not_pending" });
    const id: string = accepted.body.id;
    const altered = `${id.slice(0, -2)}${id.at(-2) === "A" ? "B" : "A"}${id.at(-1)}`;
    for (const [who, body] of [
      [bob, accepted.body],
      [alice, { ...accepted.body, id: altered }],
    ] as const) {
      const refused = await repost(a.mcpUrl, accepted, who, body);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_capability_arguments" });
    }
    expect(asking.answers.length).toBe(before);
  });

  it("answers the read as it is, at once, when the human declines or cancels: waiting_input and respond", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: nobody home");
    for (const action of ["decline", "cancel"] as const) {
      const human = await legacyClient(alice, { reply: () => ({ action }) });
      const started = Date.now();
      const result = await human.execute("remote-session:read", { sessionId, waitMs: 10_000 });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(human.asked).toHaveLength(1);
      expect(result.structuredContent).toMatchObject({ state: "waiting_input", pending: { id: read.pending.id }, next: { name: "remote-session:respond" } });
      await human.client.close();
    }
    await plain.execute("remote-session:respond", { sessionId, requestId: read.pending.id, answer: { permission: "reject" } });
  });

  it("does not ask again a question the caller's cursor has seen: after a decline it is left to respond", async () => {
    const { sessionId, read } = await waitingSession("ASK_COLOUR: footer");
    const human = await legacyClient(alice, { reply: () => ({ action: "decline" }) });
    const declined = await human.execute("remote-session:read", { sessionId, waitMs: 10_000 });
    expect(human.asked).toHaveLength(1);
    expect(declined.structuredContent).toMatchObject({ sessionId, state: "waiting_input" });
    const again = await human.execute("remote-session:read", { sessionId, cursor: declined.structuredContent.cursor, waitMs: 300 });
    expect(human.asked).toHaveLength(1);
    expect(again.structuredContent).toMatchObject({ state: "waiting_input", next: { name: "remote-session:respond" } });
    await human.client.close();
    await plain.execute("remote-session:respond", { sessionId, requestId: read.pending.id, answer: { text: "Olive" } });
  });

  it("withdraws the question when the read's time runs out before the human answers", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: slow human");
    let withdrawn = false;
    const human = await legacyClient(alice, { capabilities: { elicitation: { form: {} } } });
    human.client.setRequestHandler("elicitation/create", async (_request, ctx) => {
      await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener("abort", () => resolve(), { once: true }));
      withdrawn = true;
      return { action: "cancel" };
    });
    const started = Date.now();
    const result = await human.execute("remote-session:read", { sessionId, waitMs: 1_500 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.structuredContent).toMatchObject({ state: "waiting_input", pending: { id: read.pending.id } });
    await vi.waitFor(() => expect(withdrawn).toBe(true));
    await human.client.close();
    await plain.execute("remote-session:respond", { sessionId, requestId: read.pending.id, answer: { permission: "reject" } });
  });

  it("asks nobody, in JSON as before, for a client that did not declare elicitation", async () => {
    const { sessionId, read } = await waitingSession("ASK_BASH: quietly");
    const quiet = await legacyClient(alice, { capabilities: {} });
    const result = await quiet.execute("remote-session:read", { sessionId, waitMs: 500 });
    expect(result.structuredContent).toMatchObject({ state: "waiting_input", next: { name: "remote-session:respond" } });
    expect(quiet.posted.find((p) => p.body.method === "tools/call")?.contentType).toContain("application/json");
    await quiet.client.close();
    await plain.execute("remote-session:respond", { sessionId, requestId: read.pending.id, answer: { permission: "reject" } });
  });
});
