import { describe, expect, it } from "vitest";
import { buildCloudTranscript } from "./cloud-transcript.js";
import type { MessageWithParts } from "@openwork/opencode-client/internal";
import { type CloudStateInput, cloudSessionState } from "./turn-state.js";

const prompt: MessageWithParts = { info: { id: "msg_1", role: "user", time: { created: 1_000 } }, parts: [{ type: "text", text: "hi" }] };
const state = (input: Partial<CloudStateInput> & { messages?: MessageWithParts[] }) =>
  cloudSessionState({
    transcript: buildCloudTranscript(input.messages ?? [prompt]),
    status: undefined,
    signals: undefined,
    session: { state: "running", lastError: null, targetRef: { lastPromptId: "msg_1", lastPromptAt: 1_000 } },
    now: 2_000,
    graceMs: 10_000,
    ...input,
  });

describe("cloudSessionState", () => {
  it("is running while the worker is busy, with the retry shown", () => {
    expect(state({ status: { type: "busy" } })).toEqual({ state: "running" });
    expect(state({ status: { type: "retry", attempt: 2, message: "down", next: 5_000 } })).toEqual({
      state: "running",
      retrying: { attempt: 2, message: "down", nextAt: new Date(5_000).toISOString() },
    });
  });

  it("waits for input while a busy turn has a permission or question pending", () => {
    const pending = { kind: "permission" as const, id: "per_1", title: "bash", detail: "echo hi" };
    expect(state({ status: { type: "busy" }, pending })).toEqual({ state: "waiting_input", pending });
  });

  it("ends a turn that halted on a refused tool call once the worker is idle", () => {
    const reply: MessageWithParts = {
      info: { id: "msg_2", role: "assistant", parentID: "msg_1", time: { created: 1_100, completed: 1_500 }, finish: "tool-calls" },
      parts: [{ type: "tool", tool: "bash", callID: "c1", state: { status: "error", error: "The user rejected permission to use this specific tool call." } }],
    };
    expect(state({ messages: [prompt, reply], now: 60_000 })).toEqual({ state: "idle" });
    expect(state({ messages: [prompt, reply], status: { type: "busy" } })).toEqual({ state: "running" });
    const transcript = buildCloudTranscript([prompt, reply]);
    expect(transcript.messages[1]!.toolCalls).toEqual([
      { id: "c1", name: "bash", status: "error", summary: "The user rejected permission to use this specific tool call." },
    ]);
  });

  it("fails a prompt left unanswered by an idle worker: with the heard error, the recorded one, or after the grace", () => {
    expect(state({})).toEqual({ state: "running" });
    const signals = {
      liveText: new Map(),
      liveTextPartial: new Set<string>(),
      status: null,
      error: { name: "UnknownError", message: "boom", userMessageId: "msg_1" },
    };
    expect(state({ signals })).toEqual({ state: "failed", lastError: { error: "turn_failed", message: "boom" } });
    // An error heard for an older prompt says nothing about this one.
    expect(state({ signals: { ...signals, error: { ...signals.error, userMessageId: "msg_0" } } })).toEqual({ state: "running" });
    const recorded = { error: "model_unavailable", message: "Model not found: a/b." };
    expect(state({ session: { state: "failed", lastError: recorded, targetRef: {} } })).toEqual({ state: "failed", lastError: recorded });
    expect(state({ now: 12_000 })).toMatchObject({ state: "failed", lastError: { error: "turn_failed" } });
  });

  it("fails a turn whose reply the engine abandoned (killed mid-reply), once the worker is idle", () => {
    const abandoned: MessageWithParts = {
      info: { id: "msg_2", role: "assistant", parentID: "msg_1", time: { created: 1_100 } },
      parts: [{ type: "text", text: "" }],
    };
    const transcript = buildCloudTranscript([prompt, abandoned], { workerIdle: true });
    expect(state({ messages: [prompt, abandoned], transcript })).toEqual({
      state: "failed",
      lastError: { error: "turn_interrupted", message: expect.stringContaining("engine stopped") },
    });
    // While the worker is busy the same reply is still being written.
    expect(state({ messages: [prompt, abandoned], transcript: buildCloudTranscript([prompt, abandoned]), status: { type: "busy" } })).toEqual({
      state: "running",
    });
  });

  it("waits for a prompt the worker has not stored yet, within the grace", () => {
    const session = { state: "running" as const, lastError: null, targetRef: { lastPromptId: "msg_9", lastPromptAt: 1_000 } };
    expect(state({ session })).toEqual({ state: "running" });
    expect(state({ session, now: 20_000 })).toMatchObject({ state: "failed" });
  });
});
