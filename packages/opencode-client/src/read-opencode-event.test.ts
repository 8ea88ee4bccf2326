import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { OpencodeUpdate } from "./opencode-update.js";
import { readOpencodeEvent } from "./read-opencode-event.js";

// Each fixture is one session's part of a real opencode 1.18.33 event stream (tools/real-opencode,
// its fake model), one `data` per line, the connection's `server.connected` first.
const lines = (name: string) =>
  readFileSync(new URL(`./__fixtures__/${name}.events.jsonl`, import.meta.url), "utf8")
    .split("\n")
    .filter(Boolean);
const updatesOf = (name: string) => lines(name).flatMap((line) => readOpencodeEvent(line) ?? []);
const ofType = <T extends OpencodeUpdate["type"]>(updates: OpencodeUpdate[], type: T) =>
  updates.filter((u): u is Extract<OpencodeUpdate, { type: T }> => u.type === type);

describe("readOpencodeEvent on a real engine's stream", () => {
  it("reads a reply: connected, busy, the text part and its delta, usage, the reply's end, idle", () => {
    const updates = updatesOf("reply");
    expect(updates[0]).toEqual({ type: "connected" });
    const [part] = ofType(updates, "text-part").filter((u) => ofType(updates, "text-delta").some((d) => d.partId === u.partId));
    expect(ofType(updates, "text-delta")).toEqual([
      { type: "text-delta", sessionId: part!.sessionId, messageId: part!.messageId, partId: part!.partId, delta: "FAKE_REPLY: hello fixtures" },
    ]);
    expect(ofType(updates, "usage")).toEqual([expect.objectContaining({ messageId: part!.messageId, inputTokens: 10, outputTokens: 5, cost: 0 })]);
    // The finished reply is stored more than once: every update that says it ended is about it.
    const ended = ofType(updates, "message").filter((u) => u.ended);
    expect(new Set(ended.map((u) => `${u.role} ${u.messageId}`))).toEqual(new Set([`assistant ${part!.messageId}`]));
    expect(ofType(updates, "status").map((u) => u.status.type)).toContain("busy");
    expect(ofType(updates, "idle")).toHaveLength(1);
    expect(new Set(updates.flatMap((u) => ("sessionId" in u ? [u.sessionId] : [])))).toEqual(new Set([part!.sessionId]));
  });

  it("follows a tool call through its states, with the todo list in its state", () => {
    const todo = ofType(updatesOf("todo"), "tool").filter((u) => u.tool === "todowrite");
    expect(todo.map((u) => u.state.status)).toEqual(expect.arrayContaining(["pending", "running", "completed"]));
    const done = todo.find((u) => u.state.status === "completed")!;
    expect(done.state.metadata?.todos).toEqual([
      expect.objectContaining({ content: "Write the plan", status: "completed" }),
      expect.objectContaining({ content: "Ship it", status: "pending" }),
    ]);
  });

  it("describes a permission asked and names it when answered", () => {
    const updates = updatesOf("permission");
    const [asked] = ofType(updates, "asked");
    expect(asked?.request).toEqual({ kind: "permission", id: expect.stringMatching(/^per_/), title: "bash", detail: "echo bash-ran" });
    expect(ofType(updates, "resolved")).toEqual([expect.objectContaining({ requestId: asked!.request!.id })]);
    expect(
      ofType(updates, "tool")
        .filter((u) => u.tool === "bash")
        .at(-1)?.state,
    ).toMatchObject({ status: "completed", output: expect.stringContaining("bash-ran") });
  });

  it("describes a question asked, with its options and how many answers it takes", () => {
    const updates = updatesOf("question");
    const [asked] = ofType(updates, "asked");
    expect(asked?.request).toEqual({
      kind: "question",
      id: expect.stringMatching(/^que_/),
      title: "Colour",
      detail: "Which colour should the button be?",
      options: [
        { label: "Red", description: "Warm" },
        { label: "Blue", description: "Cool" },
      ],
      questions: 1,
    });
    expect(ofType(updates, "resolved")).toEqual([expect.objectContaining({ requestId: asked!.request!.id })]);
  });

  it("reads a turn that fails before any reply: the error twice (the second with a stack), then idle", () => {
    const errors = ofType(updatesOf("error"), "error");
    expect(errors).toHaveLength(2);
    expect(errors[0]?.error).toMatchObject({ name: "UnknownError", data: { message: "Model not found: fake/missing-model. Did you mean: fake-model?" } });
    expect(errors[1]?.error?.data?.message).toContain("\n    at ");
  });

  it("reads every fixture the same with unknown members added at every depth (a newer engine)", () => {
    for (const name of ["reply", "todo", "permission", "question", "error"]) {
      const extended = lines(name).map((line) =>
        JSON.stringify(
          JSON.parse(line, (_key, value: unknown) =>
            value && typeof value === "object" && !Array.isArray(value) ? { ...value, addedLater: { deeper: [1] } } : value,
          ),
        ),
      );
      const strip = (updates: OpencodeUpdate[]) => JSON.parse(JSON.stringify(updates, (key, value: unknown) => (key === "addedLater" ? undefined : value)));
      expect(strip(extended.flatMap((line) => readOpencodeEvent(line) ?? []))).toEqual(strip(updatesOf(name)));
    }
  });
});

describe("readOpencodeEvent on what it cannot read", () => {
  const event = (type: string, properties: unknown) => JSON.stringify({ type, properties });

  it("says nothing of text that is no event, an event of no session, or a delta of another field", () => {
    expect(readOpencodeEvent("not json")).toBeNull();
    expect(readOpencodeEvent(JSON.stringify({ properties: {} }))).toBeNull();
    expect(readOpencodeEvent(event("session.idle", {}))).toBeNull();
    expect(readOpencodeEvent(event("message.part.delta", { sessionID: "ses_1", messageID: "msg_1", field: "reasoning", delta: "x" }))).toBeNull();
    expect(readOpencodeEvent(event("session.updated", { sessionID: "ses_1" }))).toBeNull();
  });

  it("keeps the event when a member it describes has an unknown shape: an error or a request without it", () => {
    expect(readOpencodeEvent(event("session.error", { sessionID: "ses_1", error: "boom" }))).toEqual({ type: "error", sessionId: "ses_1", error: null });
    expect(readOpencodeEvent(event("permission.asked", { sessionID: "ses_1", id: 7 }))).toEqual({ type: "asked", sessionId: "ses_1", request: null });
    expect(readOpencodeEvent(event("question.asked", { sessionID: "ses_1", id: "que_1", questions: [] }))).toEqual({
      type: "asked",
      sessionId: "ses_1",
      request: null,
    });
    expect(readOpencodeEvent(event("question.rejected", { sessionID: "ses_1" }))).toEqual({ type: "resolved", sessionId: "ses_1", requestId: null });
  });

  it("reads a tool's input that a newer engine shapes otherwise as absent, keeping the call", () => {
    const part = { id: "prt_1", messageID: "msg_1", type: "tool", tool: "bash", callID: "call_1", state: { status: "running", input: "echo", output: 42 } };
    expect(readOpencodeEvent(event("message.part.updated", { sessionID: "ses_1", part }))).toMatchObject({
      type: "tool",
      callId: "call_1",
      state: { status: "running", input: undefined, output: undefined },
    });
  });
});
