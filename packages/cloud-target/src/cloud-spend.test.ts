import type { MessageWithParts } from "@openwork/opencode-client/internal";
import { expect, it } from "vitest";
import { countedSteps, spendOfMessages, withUnseenSteps } from "./cloud-spend.js";

const user = (id: string, created: number): MessageWithParts => ({ info: { id, role: "user", time: { created } }, parts: [] });
const reply = (
  id: string,
  created: number,
  completed: number | undefined,
  steps: { id?: string; tokens: Record<string, unknown>; cost?: number }[],
): MessageWithParts => ({
  info: { id, role: "assistant", time: { created, ...(completed === undefined ? {} : { completed }) } },
  parts: steps.map((step) => ({ type: "step-finish", ...step })),
});

it("sums each step's tokens, cache and reasoning included, and prices only what was priced", () => {
  const messages = [
    user("u1", 0),
    reply("a1", 10, 110, [{ tokens: { input: 100, output: 20, reasoning: 5, cache: { read: 1_000, write: 50 } }, cost: 0.0025 }]),
    user("u2", 200),
    reply("a2", 210, 260, [{ tokens: { input: 7, output: 3 }, cost: 0 }]),
  ];
  expect(spendOfMessages(messages, false, 1_000)).toEqual({ tokensIn: 1_157, tokensOut: 28, costMicros: 2_500, runningMs: 150, reported: true });
  // An unpriced model (cost 0 on every step) has no cost, as the desktop runner reads it.
  expect(spendOfMessages([user("u", 0), reply("a", 0, 5, [{ tokens: { input: 1, output: 1 }, cost: 0 }])], false, 10)).not.toHaveProperty("costMicros");
});

it("counts the reply being written up to now only while the turn runs, and an abandoned one not at all", () => {
  const abandoned = reply("a1", 0, undefined, []);
  const writing = reply("a2", 1_000, undefined, []);
  expect(spendOfMessages([user("u1", 0), abandoned, user("u2", 900), writing], true, 4_000)?.runningMs).toBe(3_000);
  expect(spendOfMessages([user("u1", 0), abandoned, user("u2", 900), writing], false, 4_000)?.runningMs).toBe(0);
  expect(spendOfMessages([user("u1", 0)], true, 4_000)).toBeUndefined();
});

it("adds the steps the event stream heard since a look, never one the look counted", () => {
  const messages = [user("u1", 0), reply("a1", 10, undefined, [{ id: "prt_1", tokens: { input: 10, output: 5 }, cost: 0.001 }])];
  const counted = countedSteps(messages)!;
  expect(counted).toEqual(new Set(["prt_1"]));
  const look = spendOfMessages(messages, true, 100)!;
  const heard = new Map([
    ["prt_1", { inputTokens: 10, outputTokens: 5, costMicros: 1_000 }],
    ["prt_2", { inputTokens: 12, outputTokens: 6 }],
    ["prt_3", { inputTokens: 1, outputTokens: 1, costMicros: 20 }],
  ]);
  expect(withUnseenSteps(look, counted, heard)).toEqual({ ...look, tokensIn: 23, tokensOut: 12, costMicros: 1_020 });
  // Nothing heard since: the look's totals, as they were.
  expect(withUnseenSteps(look, counted, new Map([["prt_1", { inputTokens: 10, outputTokens: 5 }]]))).toEqual(look);
  // A counted step without an id cannot be told apart from what was heard: no set at all.
  expect(countedSteps([user("u1", 0), reply("a1", 10, 20, [{ tokens: { input: 1, output: 1 } }])])).toBeNull();
});
