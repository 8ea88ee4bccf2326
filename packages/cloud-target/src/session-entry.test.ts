import { expect, it } from "vitest";
import { hasEntryRules, sessionEntryName, sessionEntryRules } from "./session-entry.js";

const id = "rs_0123456789abcdefghjkmnpqrs";

it("names each session's entry so its tools stay within 64 characters", () => {
  expect(sessionEntryName(id)).toBe(`ows-${id}`);
  expect(`${sessionEntryName(id)}_search_capabilities`.length).toBeLessThanOrEqual(64);
});

it("lets a session see its own entry only, the last matching rule winning", () => {
  const rules = sessionEntryRules(id);
  expect(rules.at(-1)).toEqual({ permission: `ows-${id}_*`, pattern: "*", action: "allow" });
  expect(hasEntryRules(rules, id)).toBe(true);
  // Another session's rules, none, or the allow before the deny (which the deny then overrides).
  expect(hasEntryRules(sessionEntryRules("rs_other"), id)).toBe(false);
  expect(hasEntryRules([], id)).toBe(false);
  expect(hasEntryRules([...rules].reverse(), id)).toBe(false);
  // A later blanket deny (PATCH appends) hides the entry again until the rules come after it.
  expect(hasEntryRules([...rules, rules[0]!], id)).toBe(false);
});
