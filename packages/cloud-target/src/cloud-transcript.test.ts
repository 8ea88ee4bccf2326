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
    // As opencode lists it: the running reply's text part is empty; its text so far came as events.
    const during = buildCloudTranscript([user("msg_1", "a"), assistant("msg_2", ""), user("msg_3", "b")], new Map([["msg_2", "wor"]]));
    expect(during.messages.map((m) => m.id)).toEqual(["msg_1"]);
    expect(during.partialText).toBe("wor");
    expect(buildCloudTranscript([user("msg_1", "a"), assistant("msg_2", "")]).partialText).toBeNull();
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

  it("counts a reply completed with neither finish nor error as stopped (aborted while the provider was retried)", () => {
    const retried = buildCloudTranscript([user("msg_1", "x"), { info: { id: "msg_2", role: "assistant", time: { created: 2, completed: 3 } }, parts: [] }]);
    expect(retried).toMatchObject({ turnOver: true, aborted: true, lastError: null, lastUser: { id: "msg_1", createdAt: 1 } });
    expect(buildCloudTranscript([user("msg_1", "x"), assistant("msg_2", "ok", done)]).aborted).toBe(false);
  });

  it("describes an engine error that carries no message in words, with its code beside them", () => {
    const bare = (name: string) =>
      buildCloudTranscript([user("msg_1", "x"), assistant("msg_2", "", { time: { created: 2, completed: 3 }, error: { name } })]).lastError;
    expect(bare("MessageAbortedError")).toEqual({ error: "MessageAbortedError", message: "the turn was stopped before it finished" });
    expect(bare("SomethingNew")).toEqual({ error: "SomethingNew", message: "the turn failed (SomethingNew)" });
  });
});
