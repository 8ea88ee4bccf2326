import { describe, expect, it } from "vitest";
import { dialectOf, isDefaultDialect, pollingDialects, registeredDialects, relayOf } from "./index.js";

// The registration: shared code finds every dialect here, by the name rows store.
describe("the registered dialects", () => {
  it("are named once each, ours first: what names no dialect, or one no longer registered, reads as ours", () => {
    const names = registeredDialects().map((dialect) => dialect.name);
    expect(names).toEqual(["desktop-runner", "openwork"]);
    for (const name of [undefined, null, "", "desktop-runner", "removed-dialect"]) expect(dialectOf(name).name).toBe("desktop-runner");
    expect(dialectOf("openwork").name).toBe("openwork");
    expect(isDefaultDialect(undefined)).toBe(true);
    expect(isDefaultDialect("openwork")).toBe(false);
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
    expect(pollingDialects()).toEqual(["openwork"]);
    expect(relayOf({ targetRef: { runnerId: "r", dialect: "openwork" }, targetSessionId: "ses_local" })).toBe(dialectOf("openwork").relay);
    expect(relayOf({ targetRef: { runnerId: "r", dialect: "openwork" }, targetSessionId: null })).toBeNull();
    expect(relayOf({ targetRef: { runnerId: "r" }, targetSessionId: "ses_local" })).toBeNull();
    expect(relayOf({ targetRef: { runnerId: "r", dialect: "removed-dialect" }, targetSessionId: "ses_local" })).toBeNull();
  });
});
