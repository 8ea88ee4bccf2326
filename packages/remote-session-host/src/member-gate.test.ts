import { expect, it } from "vitest";
import { createMemberGate } from "./member-gate.js";

it("forgets idle buckets past 10 000 keys at most once a minute, not at every take of a fleet signing in", () => {
  let clock = 0;
  const gate = createMemberGate(() => clock);
  const rate = { burst: 8, perSecond: 1 };
  for (let i = 0; i < 10_500; i++) expect(gate.take(`runner-token ${i}`, rate)).toBeNull();
  expect(gate.size()).toBe(10_500);
  // Within the minute nothing is swept, however many takes come.
  clock = 59_000;
  gate.take("runner-token new", rate);
  expect(gate.size()).toBe(10_501);
  // A minute on, the idle ones go at the next take; one used within the minute is kept.
  clock = 61_000;
  gate.take("runner-token newer", rate);
  expect(gate.size()).toBe(2);
});
