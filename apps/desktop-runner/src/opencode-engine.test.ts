import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createOpencodeEngine } from "./opencode-engine.js";

let opencode: RealOpencode;
beforeAll(async () => {
  opencode = await startRealOpencode();
}, 60_000);
afterAll(async () => {
  await opencode?.stop();
});

it("runs a prompt in a real opencode session", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "From the runner", workspaceId: null });
  expect(sessionId).toMatch(/^ses_/);
  const streamed: string[] = [];
  const reply = await engine.prompt({ sessionId, messageId: "rst_1", text: "hello desktop", signal: new AbortController().signal, onText: (t) => streamed.push(t) });
  expect(reply.text).toContain("FAKE_REPLY: hello desktop");
  expect(streamed.join("")).toBe(reply.text);
}, 60_000);

it("streams a slow reply as it is written, and stops the engine's turn on abort", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Slow", workspaceId: null });
  const streamed: { at: number; text: string }[] = [];
  const stop = new AbortController();
  const started = Date.now();
  const replying = engine.prompt({ sessionId, messageId: "msg_slow0000000001", text: "SLOW words", signal: stop.signal, onText: (text) => streamed.push({ at: Date.now(), text }) });
  // Text arrives piece by piece, long before the turn could have ended (300 ms a word).
  await expect.poll(() => streamed.length, { timeout: 20_000 }).toBeGreaterThan(2);
  expect(streamed.map((s) => s.text).join("")).toMatch(/^FAKE_REPLY: SLOW/);
  stop.abort();
  const reply = await replying;
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(reply.text.length).toBeLessThan("FAKE_REPLY: SLOW words".length + 40 * 5);
}, 60_000);

it("ends a turn whose model provider keeps failing when the runner gives up on it", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Bad", workspaceId: null });
  const failing = engine.prompt({ sessionId, messageId: "msg_fail0000000001", text: "FAIL500 please", signal: AbortSignal.timeout(4_000), onText: () => {} });
  // A provider that answers 500 is retried: nothing ends the turn until the signal stops it.
  await expect(failing).resolves.toMatchObject({ text: "" });
}, 60_000);
