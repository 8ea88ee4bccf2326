import { describe, expect, it } from "vitest";
import { buildCloudTranscript } from "./cloud-transcript.js";
import type { MessageWithParts } from "@openwork/opencode-client/internal";

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
    const during = buildCloudTranscript([user("msg_1", "a"), assistant("msg_2", ""), user("msg_3", "b")], { liveText: new Map([["msg_2", "wor"]]) });
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

  it("ends a reply the engine abandoned once a later reply exists, keeping what followed it", () => {
    // The engine was killed mid-reply and restarted: msg_2 stays without completion, error or text.
    const listed = [user("msg_1", "first"), assistant("msg_2", ""), user("msg_3", "second"), assistant("msg_4", "echo: second", done)];
    const transcript = buildCloudTranscript(listed, { liveText: new Map([["msg_2", "echo: fir"]]) });
    expect(transcript.messages.map((m) => [m.id, m.text])).toEqual([
      ["msg_1", "first"],
      ["msg_2", expect.stringMatching(/^echo: fir\n\n\[interrupted: .*engine stopped/)],
      ["msg_3", "second"],
      ["msg_4", "echo: second"],
    ]);
    expect(transcript).toMatchObject({ turnOver: true, lastError: null, finalAssistant: { index: 3, text: "echo: second" }, partialText: null });
  });

  it("ends the latest reply as interrupted only when the worker is idle, never while a prompt waits behind it", () => {
    const listed = [user("msg_1", "first"), assistant("msg_2", "")];
    expect(buildCloudTranscript(listed).messages).toHaveLength(1);
    const idle = buildCloudTranscript(listed, { workerIdle: true });
    expect(idle.messages.map((m) => m.id)).toEqual(["msg_1", "msg_2"]);
    expect(idle).toMatchObject({ turnOver: true, lastError: { error: "turn_interrupted" } });
    // A prompt sent during a reply is stored at once: it proves nothing about the reply.
    expect(buildCloudTranscript([...listed, user("msg_3", "queued")]).messages.map((m) => m.id)).toEqual(["msg_1"]);
  });

  it("never presents live text heard from the middle as the whole reply", () => {
    const listed = [user("msg_1", "a"), assistant("msg_2", "")];
    const liveText = new Map([["msg_2", "more more"]]);
    expect(buildCloudTranscript(listed, { liveText }).partialText).toBe("more more");
    const partial = buildCloudTranscript(listed, { liveText, liveTextPartial: new Set(["msg_2"]) }).partialText;
    expect(partial).toMatch(/^\[the start of this reply is missing here.*\] …more more$/);
  });
});
