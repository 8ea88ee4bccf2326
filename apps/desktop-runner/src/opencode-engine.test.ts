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
