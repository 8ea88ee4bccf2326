import { echoTokens } from "@openwork/desktop-runner";
import { useTestDatabase } from "@openwork/test-postgres";
import { describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import type { startTestGateway } from "./testing/test-gateway.js";
import { withEngines } from "./testing/with-engines.js";

// What a session spent, as its engine reported it, shown by read and list on both targets: the
// echo engines of `npm start` report one token per four characters at a dollar per million
// tokens; the real opencode reports what its model's replies said they used.
const db = useTestDatabase();
type Payload = Record<string, any>;

/** Creates a session on `target` and reads it until its turn ended with a reply; the last read. */
async function finishedTurn(test: Awaited<ReturnType<typeof startTestGateway>>, target: string, prompt: string): Promise<Payload> {
  const created = await test.execute("remote-session:create", { target, prompt });
  expect(created.isError).toBeUndefined();
  const sessionId = String(created.structuredContent.sessionId);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = (await test.execute("remote-session:read", { sessionId, waitMs: 2_000, from: "end" })).structuredContent as Payload;
    if (read.state === "idle" && read.finalAssistantText !== undefined) return read;
    if (Date.now() > deadline) throw new Error(`the session stayed ${read.state}`);
  }
}

/** The spend the echo engines report for `prompt`, answered `echo: <prompt>`. */
function echoSpend(prompt: string) {
  const [tokensIn, tokensOut] = [echoTokens(prompt), echoTokens(`echo: ${prompt}`)];
  return { tokens: tokensIn + tokensOut, tokensIn, tokensOut, costUsd: (tokensIn + tokensOut) / 1_000_000, usage: "reported" };
}

describe("on the echo engines of npm start", () => {
  const running = withEngines(db, fixedDevMember("spend_echo"), false);

  it("reads and lists a desktop session's spend as its runner reported it", async () => {
    const prompt = "count the tokens of this desktop prompt";
    const read = await finishedTurn(running.test!, "desktop", prompt);
    expect(read.spend).toMatchObject(echoSpend(prompt));
    const listed = (await running.test!.execute("remote-session:list", {})).structuredContent.sessions as Payload[];
    expect(listed.find((s) => s.sessionId === read.sessionId)?.spend).toEqual(read.spend);
  });

  it("reads and lists a cloud session's spend as its worker's messages say, with the time its reply ran", async () => {
    const prompt = "count the tokens of this cloud prompt";
    const read = await finishedTurn(running.test!, "cloud", prompt);
    expect(read.spend).toMatchObject(echoSpend(prompt));
    expect(read.spend.runningMs).toBeGreaterThanOrEqual(0);
    const listed = (await running.test!.execute("remote-session:list", {})).structuredContent.sessions as Payload[];
    expect(listed.find((s) => s.sessionId === read.sessionId)?.spend).toEqual(read.spend);
  });
});

describe("without a read", () => {
  const running = withEngines(db, fixedDevMember("spend_unread"), false);

  it("lists a cloud session's spend once its turn is over: the turn's follower records it", async () => {
    const prompt = "nobody reads this cloud session";
    const created = await running.test!.execute("remote-session:create", { target: "cloud", prompt });
    const sessionId = String(created.structuredContent.sessionId);
    const deadline = Date.now() + 30_000;
    let listed: Payload | undefined;
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = ((await running.test!.execute("remote-session:list", {})).structuredContent.sessions as Payload[]).find((s) => s.sessionId === sessionId);
    } while (listed?.state !== "idle" && Date.now() < deadline);
    expect(listed).toMatchObject({ state: "idle", spend: echoSpend(prompt) });
  });
});

describe("on the real opencode", () => {
  const running = withEngines(db, fixedDevMember("spend_real"), true);

  it("reads a cloud session's spend from the model's own reports", async () => {
    const read = await finishedTurn(running.test!, "cloud", "say something short");
    // The fake model is unpriced: opencode reports a cost of 0, read as no price.
    expect(read.spend).toMatchObject({ usage: "reported", costUsd: null });
    expect(read.spend.tokensIn).toBeGreaterThan(0);
    expect(read.spend.runningMs).toBeGreaterThan(0);
  });
});
