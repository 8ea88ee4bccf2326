import { describe, expect, it } from "vitest";
import { buildCloudTranscript } from "./cloud-transcript.js";
import type { MessageWithParts } from "./opencode-schemas.js";

const user = (id: string, text: string): MessageWithParts => ({
  info: { id, role: "user", time: { created: 1 } },
  parts: [{ type: "text", text }],
});
const assistant = (id: string, text: string, extra: Partial<MessageWithParts["info"]> = {}): MessageWithParts => ({
  info: { id, role: "assistant", time: { created: 2 }, ...extra },
  parts: [{ type: "text", text }],
});
const done = { time: { created: 2, completed: 3 }, finish: "stop" };

describe("buildCloudTranscript", () => {
  it("keeps a prompt queued behind a running reply out until the reply completes", () => {
    const during = buildCloudTranscript([user("msg_1", "a"), assistant("msg_2", "wor"), user("msg_3", "b")]);
    expect(during.messages.map((m) => m.id)).toEqual(["msg_1"]);
    expect(during.partialText).toBe("wor");
    expect(during.turnOver).toBe(false);
    const after = buildCloudTranscript([user("msg_1", "a"), assistant("msg_2", "word", done), user("msg_3", "b")]);
    expect(after.messages.map((m) => m.id)).toEqual(["msg_1", "msg_2", "msg_3"]);
    // The newest turn (prompt b) has no reply yet.
    expect(after.turnOver).toBe(false);
  });

  it("does not end a turn on a tool-calls step, and reports the last text of the finished turn", () => {
    const tooling = [user("msg_1", "todo"), assistant("msg_2", "", { time: { created: 2, completed: 3 }, finish: "tool-calls" })];
    expect(buildCloudTranscript(tooling).turnOver).toBe(false);
    const finished = buildCloudTranscript([...tooling, assistant("msg_3", "all done", done)]);
    expect(finished.turnOver).toBe(true);
    expect(finished.finalAssistant).toEqual({ index: 2, text: "all done" });
  });

  it("ends a turn on an error and reports it", () => {
    const aborted = assistant("msg_2", "part", { time: { created: 2, completed: 3 }, error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
    const transcript = buildCloudTranscript([user("msg_1", "x"), aborted]);
    expect(transcript.turnOver).toBe(true);
    expect(transcript.lastError).toEqual({ error: "MessageAbortedError", message: "Aborted" });
  });

  it("describes an engine error that carries no message in words, with its code beside them", () => {
    const bare = (name: string) =>
      buildCloudTranscript([user("msg_1", "x"), assistant("msg_2", "", { time: { created: 2, completed: 3 }, error: { name } })]).lastError;
    expect(bare("MessageAbortedError")).toEqual({ error: "MessageAbortedError", message: "the turn was stopped before it finished" });
    expect(bare("SomethingNew")).toEqual({ error: "SomethingNew", message: "the turn failed (SomethingNew)" });
  });
});
