import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { newOpencodeMessageId } from "./opencode-message-id.js";

it("makes ids in opencode's format that sort among the ids opencode made, by time", () => {
  // The first prompt of the reply fixture: an id opencode made, and when it made it.
  const line = readFileSync(new URL("./__fixtures__/reply.events.jsonl", import.meta.url), "utf8")
    .split("\n")
    .find((l) => l.includes('"role":"user"'))!;
  const { id, time } = (JSON.parse(line) as { properties: { info: { id: string; time: { created: number } } } }).properties.info;
  const before = newOpencodeMessageId(time.created - 1);
  const after = newOpencodeMessageId(time.created + 1);
  for (const made of [before, after]) expect(made).toMatch(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
  expect(id.length).toBe(after.length);
  expect([after, id, before].sort()).toEqual([before, id, after]);
  // Within one millisecond, in the order made.
  const same = [newOpencodeMessageId(time.created + 5), newOpencodeMessageId(time.created + 5)];
  expect([...same].sort()).toEqual(same);
});
