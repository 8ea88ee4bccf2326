import { afterAll, beforeAll, expect, it } from "vitest";
import { type RealOpencode, startRealOpencode } from "./index.js";

let opencode: RealOpencode;
beforeAll(async () => {
  opencode = await startRealOpencode();
});
afterAll(async () => {
  await opencode?.stop();
});

it("runs a real opencode offline that answers through the fake model", async () => {
  const session = (await (
    await fetch(`${opencode.url}/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "probe" }) })
  ).json()) as { id: string };
  expect(session.id).toMatch(/^ses_/);
  const answer = (await (
    await fetch(`${opencode.url}/session/${session.id}/message`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ parts: [{ type: "text", text: "ping" }] }),
    })
  ).json()) as { info: { role: string; finish?: string }; parts: { type: string; text?: string }[] };
  expect(answer.info.role).toBe("assistant");
  expect(
    answer.parts
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join(""),
  ).toContain("FAKE_REPLY: ping");
  expect(opencode.llmRequests.some((r) => r.lastUserText === "ping")).toBe(true);
  const messages = (await (await fetch(`${opencode.url}/session/${session.id}/message`)).json()) as { info: { id: string; role: string } }[];
  console.log("message ids", messages.map((m) => `${m.info.role}:${m.info.id}`).join(" "));
});

it("runs a turn of several steps with STEPS <n>, each step with its own usage", async () => {
  const session = (await (
    await fetch(`${opencode.url}/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "steps" }) })
  ).json()) as { id: string };
  await fetch(`${opencode.url}/session/${session.id}/message`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ parts: [{ type: "text", text: "STEPS 3 probe" }] }),
  });
  const calls = opencode.llmRequests.filter((r) => r.lastUserText === "STEPS 3 probe" && r.tools.length > 0);
  expect(calls).toHaveLength(4);
  const messages = (await (await fetch(`${opencode.url}/session/${session.id}/message`)).json()) as {
    info: { role: string; finish?: string; tokens?: { input: number; output: number } };
    parts: { type: string; tokens?: { input: number; output: number } }[];
  }[];
  const replies = messages.filter((m) => m.info.role === "assistant");
  expect(replies.map((m) => m.info.finish)).toEqual(["tool-calls", "tool-calls", "tool-calls", "stop"]);
  for (const reply of replies) expect(reply.parts.find((p) => p.type === "step-finish")?.tokens).toMatchObject({ input: 10, output: 5 });
});
