import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { AssignmentSchema, ClaimedAssignmentSchema, ClaimNextRequestSchema, ClaimRequestSchema } from "./assignment.js";
import { CompleteRequestSchema, WorkCompleteRequestSchema } from "./complete.js";
import { HeartbeatRequestSchema, HeartbeatResponseSchema } from "./heartbeat.js";
import { InventoryRequestSchema } from "./inventory.js";
import { LIMITS } from "./limits.js";
import { TokenMintRequestSchema } from "./registration.js";
import { PostEventsRequestSchema, TaskEventSchema } from "./task-events.js";
import { wakeFrame, WakeEventSchema } from "./wake-event.js";
import { WorkResponseSchema } from "./work.js";

const at = "2026-11-29T12:00:00.000Z";
const createAssignment = {
  taskId: "rst_1",
  sessionId: "rs_1",
  kind: "remote_session.create",
  attempt: 1,
  leaseExpiresAt: at,
  heartbeatIntervalMs: 10_000,
  model: null,
  title: "Fix the build",
  prompt: "Please fix it",
  workspaceId: null,
};

describe("requests the gateway accepts are strict", () => {
  it("refuses unknown fields with a clear path", () => {
    const result = HeartbeatRequestSchema.safeParse({ attempt: 1, extra: true });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe("unrecognized_keys");
    expect(ClaimRequestSchema.safeParse({ runner: "x" }).success).toBe(false);
  });

  it("allows each completion branch only its own fields", () => {
    const done = { attempt: 1, status: "done", localSessionId: "ses_1", summary: "ok" };
    const failed = { attempt: 1, status: "failed", error: { code: "model_access_lost", message: "no access" } };
    const cancelled = { attempt: 1, status: "cancelled", reason: "asked to" };
    for (const body of [done, failed, cancelled]) expect(CompleteRequestSchema.safeParse(body).success).toBe(true);
    expect(CompleteRequestSchema.safeParse({ ...done, error: failed.error }).success).toBe(false);
    expect(CompleteRequestSchema.safeParse({ ...failed, summary: "ok" }).success).toBe(false);
    expect(CompleteRequestSchema.safeParse({ ...cancelled, summary: "ok" }).success).toBe(false);
    expect(CompleteRequestSchema.safeParse({ attempt: 1, status: "done" }).success).toBe(false);
    expect(CompleteRequestSchema.safeParse({ ...done, status: "succeeded" }).success).toBe(false);
  });

  it("refuses error codes that are not snake_case identifiers", () => {
    const body = { attempt: 1, status: "failed", error: { code: "Model Access", message: "x" } };
    expect(CompleteRequestSchema.safeParse(body).success).toBe(false);
  });

  it("bounds every string and array", () => {
    const event = { sequence: 1, type: "assistant.delta", payload: { messageId: "m1", text: "x".repeat(LIMITS.deltaText + 1) } };
    expect(TaskEventSchema.safeParse(event).success).toBe(false);
    const many = Array.from({ length: LIMITS.eventsPerPost + 1 }, (_, i) => ({
      sequence: i + 1,
      type: "status",
      payload: { status: "running" },
    }));
    expect(PostEventsRequestSchema.safeParse({ attempt: 1, events: many }).success).toBe(false);
    const mint = { runnerId: "runner-0001", name: "Mac", platform: "darwin", appVersion: "1.0.0", protocolVersion: 1 };
    expect(TokenMintRequestSchema.safeParse(mint).success).toBe(true);
    expect(TokenMintRequestSchema.safeParse({ ...mint, name: "n".repeat(LIMITS.runnerName + 1) }).success).toBe(false);
    expect(TokenMintRequestSchema.safeParse({ ...mint, runnerId: "short" }).success).toBe(false);
    expect(TokenMintRequestSchema.safeParse({ ...mint, capabilities: Array(LIMITS.capabilities + 1).fill("a_v1") }).success).toBe(false);
    expect(TokenMintRequestSchema.safeParse({ ...mint, platform: "beos" }).success).toBe(false);
  });

  it("bounds an inventory as OpenWork's route does, with one active workspace and unique ids", () => {
    const workspace = (i: number) => ({ workspaceId: `ws_${i}`, name: `repo ${i}`, engine: "opencode" });
    const parsed = InventoryRequestSchema.parse({ workspaces: [workspace(1)] });
    expect(parsed.workspaces[0]).toEqual({ ...workspace(1), active: false, defaultModel: null, models: [] });
    const many = Array.from({ length: LIMITS.inventoryWorkspaces + 1 }, (_, i) => workspace(i));
    expect(InventoryRequestSchema.safeParse({ workspaces: many }).success).toBe(false);
    const models = Array.from({ length: LIMITS.inventoryModels + 1 }, (_, i) => ({ providerId: "p", modelId: `m${i}` }));
    expect(InventoryRequestSchema.safeParse({ workspaces: [{ ...workspace(1), models }] }).success).toBe(false);
    expect(InventoryRequestSchema.safeParse({ workspaces: [{ ...workspace(1), name: "n".repeat(LIMITS.workspaceName + 1) }] }).success).toBe(false);
    expect(InventoryRequestSchema.safeParse({ workspaces: [{ ...workspace(1), engine: "Open Code" }] }).success).toBe(false);
    expect(InventoryRequestSchema.safeParse({ workspaces: [workspace(1), workspace(1)] }).success).toBe(false);
    const two = [
      { ...workspace(1), active: true },
      { ...workspace(2), active: true },
    ];
    expect(InventoryRequestSchema.safeParse({ workspaces: two }).success).toBe(false);
  });

  it("refuses a batch of events whose sequences are not consecutive", () => {
    const events = [1, 3].map((sequence) => ({ sequence, type: "status", payload: { status: "running" } }));
    const result = PostEventsRequestSchema.safeParse({ attempt: 1, events });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["events"]);
    expect(PostEventsRequestSchema.safeParse({ attempt: 1, events: [] }).success).toBe(false);
  });

  it("checks each event type's payload", () => {
    const ok = [
      { type: "session.bound", payload: { localSessionId: "ses_1" } },
      { type: "assistant.final", payload: { messageId: "m1", text: "done" } },
      { type: "status", payload: { status: "waiting_input", waitingFor: "permission" } },
      { type: "tool.call", payload: { callId: "c1", name: "bash", status: "running" } },
      { type: "usage", payload: { inputTokens: 10, outputTokens: 2 } },
      { type: "warning", payload: { code: "slow_model", message: "slow" } },
      { type: "terminal", payload: { status: "done" } },
    ];
    for (const event of ok) expect(TaskEventSchema.safeParse({ sequence: 1, ...event }).success, event.type).toBe(true);
    expect(TaskEventSchema.safeParse({ sequence: 1, type: "usage", payload: { inputTokens: -1, outputTokens: 0 } }).success).toBe(false);
    expect(TaskEventSchema.safeParse({ sequence: 1, type: "status", payload: { status: "sleeping" } }).success).toBe(false);
    expect(TaskEventSchema.safeParse({ sequence: 0, type: "status", payload: { status: "idle" } }).success).toBe(false);
    expect(TaskEventSchema.safeParse({ sequence: 1, type: "user.prompt", payload: {} }).success).toBe(false);
  });
});

describe("the host's own work kinds (protocol 4)", () => {
  const run = { taskId: "arun_1", kind: "automation.run", attempt: 1, leaseExpiresAt: at, heartbeatIntervalMs: 10_000, input: { prompt: "digest" } };

  it("a claim may name them, well-formed and bounded", () => {
    expect(ClaimNextRequestSchema.parse({ kinds: ["remote_session.create", "automation.run"] }).kinds).toHaveLength(2);
    expect(ClaimNextRequestSchema.safeParse({ kinds: ["automation"] }).success).toBe(false);
    expect(ClaimNextRequestSchema.safeParse({ kinds: ["Automation.Run"] }).success).toBe(false);
    expect(ClaimNextRequestSchema.safeParse({ kinds: Array.from({ length: 17 }, (_, i) => `kind.k${i}`) }).success).toBe(false);
  });

  it("their assignment is read loosely, with the kind's own fields in input, and never passes for a remote-session one", () => {
    expect(ClaimedAssignmentSchema.parse({ ...run, priority: "high", input: { prompt: "digest", nested: { x: 1 } } })).toMatchObject({
      kind: "automation.run",
      priority: "high",
      input: { nested: { x: 1 } },
    });
    expect(ClaimedAssignmentSchema.parse(createAssignment)).toMatchObject({ kind: "remote_session.create", title: "Fix the build" });
    // A malformed remote-session assignment does not slip through as a host's kind.
    expect(ClaimedAssignmentSchema.safeParse({ ...createAssignment, title: undefined, input: {} }).success).toBe(false);
    expect(ClaimedAssignmentSchema.safeParse({ ...run, input: undefined }).success).toBe(false);
  });

  it("their completion is strict, with a result of the kind's own fields", () => {
    expect(WorkCompleteRequestSchema.parse({ attempt: 1, status: "done", result: { summary: "ok" } })).toMatchObject({ result: { summary: "ok" } });
    expect(WorkCompleteRequestSchema.safeParse({ attempt: 1, status: "done", localSessionId: "ses_1" }).success).toBe(false);
    expect(WorkCompleteRequestSchema.safeParse({ attempt: 1, status: "failed" }).success).toBe(false);
  });
});

describe("replies the runner reads are loose", () => {
  it("keep fields a newer gateway adds", () => {
    const answer = HeartbeatResponseSchema.parse({ attempt: 1, leaseValid: true, leaseExpiresAt: at, cancelRequested: false, hint: 1 });
    expect(answer).toMatchObject({ hint: 1 });
    expect(AssignmentSchema.parse({ ...createAssignment, priority: "high" })).toMatchObject({ priority: "high" });
  });

  it("read a create from a gateway that predates worktrees as not asking for one", () => {
    expect(AssignmentSchema.parse(createAssignment)).not.toHaveProperty("worktree");
    expect(AssignmentSchema.parse({ ...createAssignment, worktree: true })).toMatchObject({ worktree: true });
  });

  it("still refuse answers that break the contract", () => {
    expect(AssignmentSchema.safeParse({ ...createAssignment, kind: "remote_session.delete" }).success).toBe(false);
    expect(AssignmentSchema.safeParse({ ...createAssignment, leaseExpiresAt: "tomorrow" }).success).toBe(false);
    const send = { ...createAssignment, kind: "remote_session.send", messageId: "msg_1" };
    expect(AssignmentSchema.safeParse(send).success).toBe(false); // a follow-up must name its local session
    expect(AssignmentSchema.safeParse({ ...send, localSessionId: "ses_1" }).success).toBe(true);
    expect(WorkResponseSchema.safeParse({ items: [{ taskId: "rst 1", kind: "remote_session.create" }] }).success).toBe(false);
  });

  it("parse both wake events", () => {
    expect(WakeEventSchema.parse({ type: "remote_session_work_available", cursor: "7", taskId: "rst_1" }).type).toBe("remote_session_work_available");
    expect(WakeEventSchema.parse({ type: "keepalive" }).type).toBe("keepalive");
    expect(WakeEventSchema.safeParse({ type: "automation_work_available", cursor: "1" }).success).toBe(false);
  });

  it("are framed as the stream has always carried them, and read back as sent", () => {
    const hint = { type: "remote_session_work_available" as const, cursor: "7", taskId: "rst_1" };
    expect(wakeFrame(hint, "7")).toBe(
      `id: 7\nevent: remote_session_work_available\ndata: {"type":"remote_session_work_available","cursor":"7","taskId":"rst_1"}\n\n`,
    );
    expect(wakeFrame({ type: "keepalive" })).toBe(`event: keepalive\ndata: {"type":"keepalive"}\n\n`);
    const read: EventSourceMessage[] = [];
    createParser({ onEvent: (m) => read.push(m) }).feed(wakeFrame(hint, "7") + wakeFrame({ type: "keepalive" }));
    expect(read.map((m) => ({ id: m.id, event: m.event, data: WakeEventSchema.parse(JSON.parse(m.data)) }))).toEqual([
      { id: "7", event: "remote_session_work_available", data: hint },
      { id: undefined, event: "keepalive", data: { type: "keepalive" } },
    ]);
  });
});
