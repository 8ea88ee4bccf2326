import { describe, expect, it } from "vitest";
import type { Dialect } from "./dialect.js";
import { builtInDialects, createDialectSet } from "./index.js";

const dialects = createDialectSet(builtInDialects());
const dialectOf = dialects.of;

// The set a channel is given: shared code finds every dialect there, by the name rows store.
describe("the built-in dialects", () => {
  it("are named once each, ours first: what names no dialect, or one no longer registered, reads as ours", () => {
    const names = dialects.all.map((dialect) => dialect.name);
    expect(names).toEqual(["desktop-runner", "openwork"]);
    for (const name of [undefined, null, "", "desktop-runner", "removed-dialect"]) expect(dialectOf(name).name).toBe("desktop-runner");
    expect(dialectOf("openwork").name).toBe("openwork");
    expect(dialects.isDefault(undefined)).toBe(true);
    expect(dialects.isDefault("openwork")).toBe(false);
  });

  it("say which kinds a runner takes: ours all three of its protocol, OpenWork's by its capability per kind", () => {
    expect(dialectOf("desktop-runner").kindsTaken([])).toEqual(["remote_session.create", "remote_session.send", "remote_session.respond"]);
    expect(dialectOf("openwork").kindsTaken(["remote_session_v1"])).toEqual(["remote_session.create"]);
    expect(dialectOf("openwork").kindsTaken(["remote_session_v1", "remote_session_control_v1"])).toEqual([
      "remote_session.create",
      "remote_session.send",
      "remote_session.read",
      "remote_session.stop",
    ]);
  });

  it("relay only a session held by a desktop that keeps its transcript, once it has a local session", () => {
    expect(dialects.polling).toEqual(["openwork"]);
    expect(dialects.relayOf({ targetRef: { runnerId: "r", dialect: "openwork" }, targetSessionId: "ses_local" })).toBe(dialectOf("openwork").relay);
    expect(dialects.relayOf({ targetRef: { runnerId: "r", dialect: "openwork" }, targetSessionId: null })).toBeNull();
    expect(dialects.relayOf({ targetRef: { runnerId: "r" }, targetSessionId: "ses_local" })).toBeNull();
    expect(dialects.relayOf({ targetRef: { runnerId: "r", dialect: "removed-dialect" }, targetSessionId: "ses_local" })).toBeNull();
  });
});

describe("a set of dialects", () => {
  const named = (name: string): Dialect => ({ ...builtInDialects()[0]!, name });

  it("takes a host's own dialect as a value, the first being the default", () => {
    const set = createDialectSet([named("third-desktop"), ...builtInDialects()]);
    expect(set.of(null).name).toBe("third-desktop");
    expect(set.of("openwork").name).toBe("openwork");
    expect(set.isDefault("desktop-runner")).toBe(false);
  });

  it("refuses no dialect, a name that is not a dialect name, or one name twice", () => {
    expect(() => createDialectSet([])).toThrow(/at least one dialect/);
    expect(() => createDialectSet([named("Third Desktop")])).toThrow(/must match/);
    expect(() => createDialectSet([named("twice"), named("twice")])).toThrow(/given twice/);
  });
});
