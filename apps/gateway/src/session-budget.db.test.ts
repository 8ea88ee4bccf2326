import { useTestDatabase } from "@openwork/test-postgres";
import { describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { withEngines } from "./testing/with-engines.js";

// Budgets end to end on the echo engines of `npm start` (one token per four characters): a
// session whose spend reaches its budget pauses as a `budget` request, refuses sends, and goes on
// once the member raises the budget through respond; on the echo desktop and the echo cloud worker.
const db = useTestDatabase();
type Payload = Record<string, any>;
const running = withEngines(db, fixedDevMember("budget_echo"), false);

/** Reads the session until `done` holds of a read; the last read. */
const readUntil = (sessionId: string, done: (read: Payload) => boolean) => readUntilOn(running.test!, sessionId, done);

async function readUntilOn(
  test: { execute: (name: string, body: Record<string, unknown>) => Promise<{ structuredContent: unknown }> },
  sessionId: string,
  done: (read: Payload) => boolean,
): Promise<Payload> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = (await test.execute("remote-session:read", { sessionId, waitMs: 1_000, from: "end" })).structuredContent as Payload;
    if (done(read)) return read;
    if (Date.now() > deadline) throw new Error(`the session stayed ${read.state}`);
  }
}

describe.each(["desktop", "cloud"])("a budget on the %s echo engine", (target) => {
  it("pauses the session once its spend reaches it, refuses sends, and goes on when the member raises it", async () => {
    const test = running.test!;
    const prompt = "spend more than this session's budget of ten tokens allows";
    const created = await test.execute("remote-session:create", { target, prompt, budget: { tokens: 10 } });
    expect(created.isError).toBeUndefined();
    const sessionId = String(created.structuredContent.sessionId);
    const paused = await readUntil(sessionId, (read) => read.pending?.kind === "budget");
    expect(paused).toMatchObject({
      state: "waiting_input",
      budget: { tokens: 10 },
      remaining: { tokens: 0 },
      pending: { kind: "budget", scope: "session", budgetOf: sessionId, budget: { tokens: 10 } },
      next: { name: "remote-session:respond", body: { sessionId, requestId: paused.pending.id } },
    });
    expect(paused.pending.spent.tokens).toBeGreaterThanOrEqual(10);
    const listed = ((await test.execute("remote-session:list", {})).structuredContent.sessions as Payload[]).find((s) => s.sessionId === sessionId);
    expect(listed).toMatchObject({ state: "waiting_input", budget: { tokens: 10 }, pausedAtBudget: { requestId: paused.pending.id, scope: "session" } });

    const refused = await test.execute("remote-session:send", { sessionId, prompt: "and more" });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: "budget_paused", sessionId, requestId: paused.pending.id });

    const tooLow = await test.execute("remote-session:respond", { sessionId, requestId: paused.pending.id, answer: { budget: { tokens: 11 } } });
    expect(tooLow.structuredContent).toMatchObject({ error: "invalid_capability_arguments" });
    const raised = await test.execute("remote-session:respond", { sessionId, requestId: paused.pending.id, answer: { budget: { tokens: 10_000 } } });
    expect(raised.isError).toBeUndefined();
    const goneOn = await readUntil(sessionId, (read) => read.state === "idle");
    expect(goneOn).toMatchObject({ budget: { tokens: 10_000 } });
    expect(goneOn.pending).toBeUndefined();
    const sent = await test.execute("remote-session:send", { sessionId, prompt: "now within budget" });
    expect(sent.isError).toBeUndefined();
    await readUntil(sessionId, (read) => read.state === "idle" && String(read.finalAssistantText).includes("now within budget"));
  });

  it("is stopped from its pause", async () => {
    const test = running.test!;
    const created = await test.execute("remote-session:create", { target, prompt: "a prompt that spends its whole budget", budget: { tokens: 5 } });
    const sessionId = String(created.structuredContent.sessionId);
    await readUntil(sessionId, (read) => read.pending?.kind === "budget");
    const stopped = await test.execute("remote-session:stop", { sessionId });
    expect(stopped.isError).toBeUndefined();
    const read = await readUntil(sessionId, (r) => r.state !== "waiting_input");
    expect(read.pending).toBeUndefined();
  });
});

describe("on the real opencode", () => {
  const real = withEngines(db, fixedDevMember("budget_real"), true);

  it("pauses a cloud session at its budget from the model's own usage, and goes on once raised", async () => {
    const test = real.test!;
    const created = await test.execute("remote-session:create", { target: "cloud", prompt: "say something short", budget: { tokens: 1 } });
    expect(created.isError).toBeUndefined();
    const sessionId = String(created.structuredContent.sessionId);
    const paused = await readUntilOn(test, sessionId, (read) => read.pending?.kind === "budget");
    expect(paused).toMatchObject({ state: "waiting_input", pending: { kind: "budget", scope: "session", budget: { tokens: 1 } } });
    expect(paused.pending.spent.tokens).toBeGreaterThan(1);
    const raised = await test.execute("remote-session:respond", { sessionId, requestId: paused.pending.id, answer: { budget: { tokens: 1_000_000_000 } } });
    expect(raised.isError).toBeUndefined();
    const goneOn = await readUntilOn(test, sessionId, (read) => read.state === "idle");
    expect(goneOn.pending).toBeUndefined();
    expect(goneOn.remaining.tokens).toBeGreaterThan(0);
  });
});
