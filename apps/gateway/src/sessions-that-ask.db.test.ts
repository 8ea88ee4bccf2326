import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { createOpencodeEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// A turn that asks the human, end to end through execute_capability, on a real opencode behind
// both targets: the cloud worker (the witness mounting opencode) and a desktop runner driving it.
const db = useTestDatabase();
const member = fixedDevMember("asker");
let opencode: RealOpencode;
let witness: RunningWitness;
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;
const logLines: string[] = [];

beforeAll(async () => {
  opencode = await startRealOpencode();
  witness = await startWitnessWorker({
    clientToken: "client-token-ask",
    hostToken: "host-token-ask",
    gatewayKey: "gateway-key-ask",
    opencode: { url: opencode.url, directory: opencode.directory },
  });
  const log = (m: string, f?: Record<string, unknown>) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`);
  test = await startTestGateway(db.current.url, member, {
    cloudEnabled: () => true,
    cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-ask" }),
    logger: { info: log, warn: log, error: log },
  });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    runnerId: "asker-desktop-0001",
    name: "Asker's desktop",
    engine: createOpencodeEngine({ url: opencode.url, directory: opencode.directory }),
  });
  const deadline = Date.now() + 15_000;
  while (test.gateway.hub.stats().runnerStreams < 1) {
    if (Date.now() > deadline) throw new Error("the desktop runner never connected");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}, 90_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
  await witness?.close();
  await opencode?.stop();
  // Answers are like prompts: never in a log line.
  expect(logLines.join("\n")).not.toContain("Turquoise");
});

const ok = async (name: string, body: Record<string, unknown>) => {
  const result = await test.execute(name, body);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
};
/** Reads (waiting) until `done` holds; the agent's loop. */
const readUntil = async (sessionId: string, done: (read: Record<string, any>) => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await ok("remote-session:read", { sessionId, waitMs: 2_000, from: "end" });
    if (done(read)) return read;
    if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${read.state}`);
  }
};
const toolCalls = (read: Record<string, any>) =>
  (read.messages as { toolCalls: { name: string; status: string; summary?: string }[] }[]).flatMap((m) => m.toolCalls);

describe.each(["cloud", "desktop"])("a session that asks, on the %s target", (target) => {
  it("waits for a bash permission; once lets the command run, and the same answer again is a no-op", async () => {
    const created = await ok("remote-session:create", { target, title: "bash once", prompt: "RUNBASH please" });
    const waiting = await readUntil(created.sessionId, (r) => r.state === "waiting_input");
    expect(waiting.pending).toMatchObject({
      kind: "permission",
      id: expect.stringMatching(/^per_/),
      title: "bash",
      detail: "echo bash-ran",
      askedAt: expect.any(String),
    });
    expect(waiting.next).toEqual({
      name: "remote-session:respond",
      body: { sessionId: created.sessionId, requestId: waiting.pending.id, answer: { permission: "<once | always | reject>" } },
    });
    // A question's answer does not fit a permission: refused, nothing sent.
    const misfit = await test.execute("remote-session:respond", { sessionId: created.sessionId, requestId: waiting.pending.id, answer: { text: "yes" } });
    expect(misfit).toMatchObject({ isError: true, structuredContent: { error: "invalid_capability_arguments" } });
    // A reader that already saw the request (an open card) holds one read from that cursor: it
    // returns on the answer, never at once on the request it was shown.
    const held = ok("remote-session:read", { sessionId: created.sessionId, cursor: waiting.cursor, waitMs: 20_000 });
    const answer = { sessionId: created.sessionId, requestId: waiting.pending.id, answer: { permission: "once" } };
    const answered = await ok("remote-session:respond", answer);
    // It may also end on something new past its cursor (on a loaded machine the engine's words
    // before it asked can land after the request): then it moved on, and a read from there waits.
    let after = await held;
    for (let cursor = waiting.cursor; after.state === "waiting_input"; cursor = after.cursor) {
      expect(after.cursor).not.toBe(cursor);
      after = await ok("remote-session:read", { sessionId: created.sessionId, cursor: after.cursor, waitMs: 20_000 });
    }
    expect(answered).toMatchObject({ requestId: waiting.pending.id, alreadyAnswered: false, delivered: true, next: { name: "remote-session:read" } });
    const done = await readUntil(created.sessionId, (r) => r.state === "idle");
    expect(done.finalAssistantText).toContain("bash-ran");
    expect(toolCalls(done)).toContainEqual(expect.objectContaining({ name: "bash", status: "completed" }));
    expect(await ok("remote-session:respond", answer)).toMatchObject({ alreadyAnswered: true });
    // Another answer to a request no longer pending is a typed error.
    const late = await test.execute("remote-session:respond", { ...answer, answer: { permission: "reject" } });
    expect(late).toMatchObject({ isError: true, structuredContent: { error: "input_not_pending" } });
  }, 90_000);

  it("ends the turn when the permission is rejected, with the engine's own words", async () => {
    const created = await ok("remote-session:create", { target, title: "bash reject", prompt: "RUNBASH please" });
    const waiting = await readUntil(created.sessionId, (r) => r.state === "waiting_input");
    await ok("remote-session:respond", { sessionId: created.sessionId, requestId: waiting.pending.id, answer: { permission: "reject" } });
    const done = await readUntil(created.sessionId, (r) => r.state === "idle");
    expect(toolCalls(done)).toContainEqual(
      expect.objectContaining({ name: "bash", status: "error", summary: "The user rejected permission to use this specific tool call." }),
    );
    expect(done.pending).toBeUndefined();
  }, 90_000);

  it("asks a question; a text answer continues the turn", async () => {
    const created = await ok("remote-session:create", { target, title: "question", prompt: "ASKQ please" });
    const waiting = await readUntil(created.sessionId, (r) => r.state === "waiting_input");
    expect(waiting.pending).toMatchObject({
      kind: "question",
      title: "Colour",
      detail: "Which colour should the button be?",
      options: [{ label: "Red" }, { label: "Blue" }],
    });
    expect(waiting.next.body.answer).toEqual({ text: "<your answer>" });
    await ok("remote-session:respond", { sessionId: created.sessionId, requestId: waiting.pending.id, answer: { text: "Turquoise" } });
    const done = await readUntil(created.sessionId, (r) => r.state === "idle");
    expect(done.finalAssistantText).toContain('"Which colour should the button be?"="Turquoise"');
  }, 90_000);

  it("shows a slow turn's text while it is written", async () => {
    const created = await ok("remote-session:create", { target, title: "slow", prompt: "SLOW words" });
    const partial = await readUntil(created.sessionId, (r) => typeof r.partialText === "string" && r.partialText.length > 0, 20_000);
    expect(partial.state).toBe("running");
    expect(partial.partialText).toMatch(/^FAKE_REPLY: SLOW/);
    await ok("remote-session:stop", { sessionId: created.sessionId });
  }, 60_000);
});

it("reports a session nobody answers for too long as overdue, not as an ordinary wait", async () => {
  const overdue = await startTestGateway(db.current.url, member, {
    cloudEnabled: () => true,
    cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-ask" }),
    inputTimeoutMs: 500,
  });
  try {
    const created = (await overdue.execute("remote-session:create", { target: "cloud", title: "ignored", prompt: "RUNBASH please" }))
      .structuredContent as Record<string, any>;
    let read: Record<string, any> = {};
    for (let i = 0; i < 30 && !read.pending?.overdue; i++) {
      read = (await overdue.execute("remote-session:read", { sessionId: created.sessionId, waitMs: 1_000 })).structuredContent as Record<string, any>;
    }
    expect(read).toMatchObject({ state: "waiting_input", pending: { kind: "permission", overdue: true } });
    await overdue.execute("remote-session:stop", { sessionId: created.sessionId });
  } finally {
    await overdue.close();
  }
}, 60_000);
