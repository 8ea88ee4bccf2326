import { describe, expect, it } from "vitest";
import { fitMatches } from "./fit-matches.js";

// Matches of the size search answers with: each with a schema whose prose is most of it.
const schema = (words: number, states = ["idle", "running"]) => ({
  type: "object",
  properties: {
    sessionId: { type: "string", description: "word ".repeat(words) },
    state: { type: "string", enum: states, description: "word ".repeat(words) },
  },
  required: ["sessionId"],
  additionalProperties: false,
});
const matches = (count: number, words: number, states?: string[]) =>
  Array.from({ length: count }, (_, i) => ({ name: `remote-session:action${i}`, score: 14 - i, argumentsSchema: schema(words, states) }));
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("search's answer within one result", () => {
  it("keeps a result that fits as it is", () => {
    const small = matches(3, 5);
    expect(fitMatches(small)).toEqual({ matches: small });
  });

  it("never drops a match: the lowest-ranked lose their descriptions first, the best keep theirs whole", () => {
    const found = matches(8, 120);
    const fitted = fitMatches(found, 11_000);
    expect(bytes(fitted)).toBeLessThanOrEqual(11_000);
    expect(fitted.matches.map((m) => m.name)).toEqual(found.map((m) => m.name));
    expect(fitted.matches[0]).toEqual(found[0]);
    const last = fitted.matches.at(-1)!.argumentsSchema as ReturnType<typeof schema>;
    // Types, required members and enums stay; only the prose went.
    expect(last).toEqual({
      type: "object",
      properties: { sessionId: { type: "string" }, state: { type: "string", enum: ["idle", "running"] } },
      required: ["sessionId"],
      additionalProperties: false,
    });
    expect(fitted.compacted?.names).toContain(found.at(-1)!.name);
    expect(fitted.compacted?.names).not.toContain(found[0]!.name);
    expect(fitted.compacted?.note).toMatch(/limit 1/);
  });

  it("drops the lowest-ranked schemas when even their bare shapes do not fit, still naming every match", () => {
    // Bare shapes of ~700 bytes each: twenty of them are more than a result holds.
    const found = matches(
      20,
      200,
      Array.from({ length: 60 }, (_, i) => `state${i}`),
    );
    const fitted = fitMatches(found, 11_000);
    expect(bytes(fitted)).toBeLessThanOrEqual(11_000);
    expect(fitted.matches).toHaveLength(20);
    expect(fitted.matches.at(-1)).not.toHaveProperty("argumentsSchema");
    expect(fitted.compacted?.names).toContain(found.at(-1)!.name);
  });
});
