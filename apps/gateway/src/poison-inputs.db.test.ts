import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const member = fixedDevMember("poison");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member, { sendRateLimit: { bucket: "send", limit: 11, windowMs: 3_600_000 } });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

const execute = (name: string, body: unknown) => test.execute(name, body);
const sessionCount = async () => Number((await test.sql`select count(*)::int as n from remote_session`)[0]!.n);

describe("poison inputs", () => {
  it("stores a reply with NUL and a surrogate pair cut in half: the turn lands, no route answers 5xx", async () => {
    const minted = await requestRunnerToken({
      baseUrl: test.gateway.baseUrl,
      memberToken: member.sessionToken,
      request: {
        runnerId: "runner-poison-0001",
        name: "Poison\u0000Box",
        platform: "linux",
        appVersion: "1",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: [...RUNNER_CAPABILITIES],
      },
    });
    const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token: minted.token, retry: { limit: 0 } });
    const created = await execute("remote-session:create", { target: "desktop", prompt: "go" });
    const [item] = (await runner.work()).items;
    const { attempt } = await runner.claim(item!.taskId);
    const cut = `${"x".repeat(1_999)}😀`.slice(0, 2_000); // ends in half an emoji
    await runner.postEvents(item!.taskId, attempt, [
      { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_poison" } },
      { sequence: 2, type: "assistant.delta", payload: { messageId: "m1", text: "before\u0000after" } },
      { sequence: 3, type: "assistant.final", payload: { messageId: "m1", text: cut } },
    ]);
    // The same events again (a retry) are recognised, not refused as changed.
    await runner.postEvents(item!.taskId, attempt, [{ sequence: 2, type: "assistant.delta", payload: { messageId: "m1", text: "before\u0000after" } }]);
    await runner.complete(item!.taskId, { attempt, status: "failed", localSessionId: "ses_poison", error: { code: "engine_error", message: "bad\u0000byte" } });
    const read = await execute("remote-session:read", { sessionId: created.structuredContent.sessionId });
    expect(read.structuredContent).toMatchObject({ state: "failed", lastError: { error: "engine_error", message: "bad\uFFFDbyte" } });
    const reply = (read.structuredContent.messages as { role: string; text: string }[]).find((m) => m.role === "assistant")!;
    expect(reply.text).toBe(`${"x".repeat(1_999)}\uFFFD`);
  });

  it("refuses NUL in arguments before any side effect, as invalid arguments that are not retryable", async () => {
    const before = await sessionCount();
    for (const body of [
      { target: "desktop", title: "a\u0000b", deliverBy: new Date(Date.now() + 60_000).toISOString() },
      { target: "desktop", prompt: "p\u0000", deliverBy: new Date(Date.now() + 60_000).toISOString() },
      { target: "desktop", runner: "mac\u0000" },
      { target: "desktop", model: { providerId: "openai\u0000", modelId: "m" } },
    ]) {
      expect((await execute("remote-session:create", body)).structuredContent).toMatchObject({ error: "invalid_capability_arguments", retryable: false });
    }
    expect(await sessionCount()).toBe(before);
  });

  it("refuses ids and cursors that could reach a URL or a SQL type badly", async () => {
    for (const workspaceId of ["..", "../admin", "a%2Fb", "a/b", "ws\u0001"]) {
      const refused = await execute("remote-session:create", { target: "desktop", workspaceId, deliverBy: new Date(Date.now() + 60_000).toISOString() });
      expect(refused.structuredContent).toMatchObject({ error: "invalid_capability_arguments", issues: [expect.objectContaining({ path: "workspaceId" })] });
    }
    for (const c of ["0000-01-01T00:00:00.000Z", "+275760-09-13T00:00:00.000Z", "2026-13-01T00:00:00.000Z"]) {
      const cursor = Buffer.from(JSON.stringify({ c, i: "rs_01jxxxxxxxxxxxxxxxxxxxxxxx" })).toString("base64url");
      expect((await execute("remote-session:list", { cursor })).structuredContent).toMatchObject({ error: "invalid_capability_arguments", retryable: false });
    }
  });

  it("bounds deliverBy to 7 days, follow-ups waiting per session, and sends per member", async () => {
    const far = await execute("remote-session:create", { target: "desktop", deliverBy: "9999-12-31T00:00:00Z" });
    expect(far.structuredContent).toMatchObject({ error: "invalid_capability_arguments", issues: [expect.objectContaining({ path: "deliverBy" })] });
    const created = await execute("remote-session:create", { target: "desktop", prompt: "later", deliverBy: new Date(Date.now() + 600_000).toISOString() });
    const sessionId = created.structuredContent.sessionId;
    const answers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const sent = await execute("remote-session:send", { sessionId, prompt: `follow-up ${i}` });
      answers.push(String(sent.structuredContent.error ?? sent.structuredContent.state));
    }
    // The create's own turn and seven follow-ups wait; the rest are refused, retryable.
    expect(answers).toEqual([...Array(7).fill("accepted"), "queue_full", "queue_full", "queue_full"]);
    const queued = await test.sql`select count(*)::int as n from desktop_task where session_id = ${String(sessionId)} and state = 'queued'`;
    expect(queued[0]!.n).toBe(8);
    // Eleven sends an hour for this gateway: the twelfth is rate limited. (An hour, not a minute:
    // the windows are fixed, and a slow run once crossed a minute's edge between the two counts.)
    const limited = [await execute("remote-session:send", { sessionId, prompt: "x" }), await execute("remote-session:send", { sessionId, prompt: "y" })];
    expect(limited.map((r) => r.structuredContent.error)).toEqual(["queue_full", "rate_limited"]);
  });
});
