import { describe, expect, it } from "vitest";
import { type HostWorkKind, hostWorkKinds } from "./host-work-kind.js";

const kind = (name: string, idPrefix: string): HostWorkKind => ({
  kind: name,
  idPrefix,
  claimNext: async () => null,
  heartbeat: async () => ({ refused: "not_found", message: "none" }),
  appendEvents: async () => ({ refused: "not_found", message: "none" }),
  complete: async () => ({ refused: "not_found", message: "none" }),
});

describe("hostWorkKinds", () => {
  it("finds a kind by its name and its tasks by their id prefix", () => {
    const kinds = hostWorkKinds([kind("automation.run", "arun_"), kind("reports.build", "rep_")]);
    expect(kinds.byName("automation.run")?.idPrefix).toBe("arun_");
    expect(kinds.ofTask("rep_0123")?.kind).toBe("reports.build");
    expect(kinds.ofTask("rst_0123")).toBeUndefined();
    expect(kinds.ofTask("noprefix")).toBeUndefined();
    expect(kinds.byName("remote_session.create")).toBeUndefined();
  });

  it("refuses, at start-up, a remote-session name, a malformed name or prefix, and a name or prefix taken twice", () => {
    expect(() => hostWorkKinds([kind("remote_session.create", "rsc_")])).toThrow(TypeError);
    expect(() => hostWorkKinds([kind("Automation", "arun_")])).toThrow(/dotted lowercase words/);
    expect(() => hostWorkKinds([kind("automation.run", "rst_")])).toThrow(/idPrefix/);
    expect(() => hostWorkKinds([kind("automation.run", "ARun-")])).toThrow(/idPrefix/);
    expect(() => hostWorkKinds([kind("automation.run", "arun_"), kind("automation.run", "brun_")])).toThrow(/taken/);
    expect(() => hostWorkKinds([kind("automation.run", "arun_"), kind("reports.build", "arun_")])).toThrow(/taken/);
  });
});
