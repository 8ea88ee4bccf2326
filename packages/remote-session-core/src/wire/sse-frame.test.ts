import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { SseFieldError } from "./sse-field-error.js";
import { sseComment, sseFrame, type SseMessage } from "./sse-frame.js";

/** What a standard reader makes of a stream: its messages, comments and retry hints. */
function parse(stream: string) {
  const messages: EventSourceMessage[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const parser = createParser({ onEvent: (m) => messages.push(m), onComment: (c) => comments.push(c), onRetry: (r) => retries.push(r) });
  parser.feed(stream);
  return { messages, comments, retries };
}

function refusal(write: () => unknown): SseFieldError {
  try {
    write();
  } catch (error) {
    if (SseFieldError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the writer wrote the frame");
}

describe("sseFrame", () => {
  it("writes the bytes the hand-formatted streams wrote for single-line data", () => {
    const data = JSON.stringify({ type: "remote_session_work_available", cursor: "7", taskId: "t_1" });
    expect(sseFrame({ id: "7", event: "remote_session_work_available", data })).toBe(`id: 7\nevent: remote_session_work_available\ndata: ${data}\n\n`);
    expect(sseFrame({ event: "keepalive", data: "{}" })).toBe("event: keepalive\ndata: {}\n\n");
    expect(sseFrame({ data: '{"type":"server.connected"}' })).toBe('data: {"type":"server.connected"}\n\n');
    expect(sseComment("keepalive")).toBe(": keepalive\n\n");
  });

  it("splits multi-line data into one data line each, whatever the line break, and a reader joins them back", () => {
    expect(sseFrame({ data: "a\nb\r\nc\rd" })).toBe("data: a\ndata: b\ndata: c\ndata: d\n\n");
    expect(parse(sseFrame({ data: "a\nb\r\nc\rd" })).messages[0]?.data).toBe("a\nb\nc\nd");
    expect(parse(sseFrame({ data: "" })).messages).toEqual([{ id: undefined, event: undefined, data: "" }]);
  });

  it("refuses a CR or LF in id and event, which would start a forged field", () => {
    for (const bad of ["1\ndata: forged", "1\r", "a\r\nb"]) {
      expect(refusal(() => sseFrame({ id: bad, data: "x" }))).toMatchObject({ name: "SseFieldError", field: "id" });
      expect(refusal(() => sseFrame({ event: bad, data: "x" }))).toMatchObject({ name: "SseFieldError", field: "event" });
    }
    expect(refusal(() => sseFrame({ id: "a\0b", data: "x" })).field).toBe("id");
    expect(refusal(() => sseComment("keep\nalive")).field).toBe("comment");
    for (const bad of [-1, 1.5, Number.NaN]) expect(refusal(() => sseFrame({ retry: bad, data: "x" })).field).toBe("retry");
  });

  it("gives a standard reader back the id, event, data and retry it was given", () => {
    const sent: SseMessage[] = [
      { id: "41", event: "message", data: JSON.stringify({ jsonrpc: "2.0", method: "notifications/resources/updated" }) },
      { event: "keepalive", data: "{}" },
      { id: "", data: "line one\nline two", retry: 3000 },
      { data: " leading space kept" },
    ];
    const read = parse(sseComment("stream open") + sent.map(sseFrame).join("") + sseComment("keepalive"));
    expect(read.messages).toEqual(sent.map((m) => ({ id: m.id, event: m.event, data: m.data })));
    expect(read.retries).toEqual([3000]);
    expect(read.comments).toEqual(["stream open", "keepalive"]);
  });
});
