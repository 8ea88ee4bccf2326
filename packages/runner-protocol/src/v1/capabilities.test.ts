import { describe, expect, it } from "vitest";
import { RUNNER_PROTOCOL_VERSION, canRunnerTake, grantCapabilities, taskRequirements } from "./capabilities.js";

describe("negotiation", () => {
  const current = { protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: ["session_create_v1", "session_followup_v1"] };

  it("derives what a task needs from its kind and model", () => {
    expect(taskRequirements({ kind: "remote_session.create" }).capabilities).toEqual(["session_create_v1"]);
    expect(taskRequirements({ kind: "remote_session.send" }).capabilities).toEqual(["session_followup_v1"]);
    expect(taskRequirements({ kind: "remote_session.create", model: { variant: "high" } }).capabilities).toEqual(["session_create_v1", "model_variant_v1"]);
  });

  it("asks for worktree_v1 when a create runs in a fresh worktree, so a runner without it is never offered the task", () => {
    const requirements = taskRequirements({ kind: "remote_session.create", worktree: true });
    expect(requirements.capabilities).toEqual(["session_create_v1", "worktree_v1"]);
    expect(canRunnerTake(current, requirements)).toEqual({ ok: false, reason: "missing_capabilities", missing: ["worktree_v1"] });
    expect(canRunnerTake({ ...current, capabilities: [...current.capabilities, "worktree_v1"] }, requirements)).toEqual({ ok: true });
    expect(taskRequirements({ kind: "remote_session.create", worktree: false }).capabilities).toEqual(["session_create_v1"]);
  });

  it("lets a runner with every capability take the task", () => {
    expect(canRunnerTake(current, taskRequirements({ kind: "remote_session.send" }))).toEqual({ ok: true });
  });

  it("says which capabilities a runner lacks", () => {
    const old = { protocolVersion: 1, capabilities: ["session_create_v1"] };
    expect(canRunnerTake(old, taskRequirements({ kind: "remote_session.create", model: { variant: "high" } }))).toEqual({
      ok: false,
      reason: "missing_capabilities",
      missing: ["model_variant_v1"],
    });
  });

  it("refuses a runner older than the task's protocol version", () => {
    expect(canRunnerTake({ protocolVersion: 0, capabilities: current.capabilities }, taskRequirements({ kind: "remote_session.create" }))).toEqual({
      ok: false,
      reason: "protocol_version_unsupported",
      need: 1,
      have: 0,
    });
  });

  it("grants only known capabilities, in canonical order", () => {
    expect(grantCapabilities(["future_thing_v9", "session_followup_v1", "session_create_v1"])).toEqual(["session_create_v1", "session_followup_v1"]);
  });

  it("reads a protocol-1 runner's names in their v1 meaning: never OpenWork's remote_session_v1 for a v2 runner", () => {
    expect(grantCapabilities(["remote_session_v1", "remote_session_followup_v1", "model_variant_v1"], 1)).toEqual([
      "session_create_v1",
      "session_followup_v1",
      "model_variant_v1",
    ]);
    expect(grantCapabilities(["remote_session_v1", "remote_session_followup_v1"], 2)).toEqual([]);
  });
});
