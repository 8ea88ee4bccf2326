import { describe, expect, it } from "vitest";
import { createWorkerEvents, STREAM_GAP } from "./worker-events.js";

/** A worker whose event streams the test writes to, one at a time. */
function fakeWorker() {
  let push: ((event: unknown) => void) | undefined;
  let end: (() => void) | undefined;
  let opened = 0;
  const encoder = new TextEncoder();
  const fetch = (async () => {
    opened++;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (event) => controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
        end = () => controller.close();
        push({ type: "server.connected", properties: {} });
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }) as typeof globalThis.fetch;
  return { fetch, send: (type: string, properties: Record<string, unknown>) => push!({ type, properties }), end: () => end!(), opened: () => opened };
}

const source = { url: "http://worker.test", clientToken: "c", workspaceId: "ws_1" };
const part = { sessionID: "ses_1", part: { id: "prt_1", messageID: "msg_2", sessionID: "ses_1", type: "text", text: "" } };
const delta = (text: string) => ({ sessionID: "ses_1", messageID: "msg_2", partID: "prt_1", field: "text", delta: text });

describe("worker events: live text", () => {
  it("is whole when the part's creation was heard, and marked partial when the stream joined mid-part", async () => {
    const worker = fakeWorker();
    const events = createWorkerEvents({ fetch: worker.fetch, lingerMs: 10 });
    const watch = events.watch(source, "ses_1");
    await watch.connected;
    worker.send("message.part.updated", part);
    worker.send("message.part.delta", delta("Hello "));
    await expect.poll(() => watch.signals().liveText.get("msg_2")).toBe("Hello ");
    expect(watch.signals().liveTextPartial.has("msg_2")).toBe(false);
    worker.send("message.part.delta", { ...delta("x"), messageID: "msg_3", partID: "prt_9" });
    await expect.poll(() => watch.signals().liveTextPartial.has("msg_3")).toBe(true);
    watch.close();
    events.close();
  });

  it("keeps what it heard across a dropped stream, and marks where it resumed", async () => {
    const worker = fakeWorker();
    const events = createWorkerEvents({ fetch: worker.fetch, lingerMs: 10 });
    const first = events.watch(source, "ses_1");
    await first.connected;
    worker.send("message.part.updated", part);
    worker.send("message.part.delta", delta("Hello "));
    await expect.poll(() => first.signals().liveText.get("msg_2")).toBe("Hello ");
    worker.end();
    await expect.poll(() => first.live()).toBe(false);
    first.close();
    // Known without a stream: what was heard before it dropped (a reply abandoned meanwhile keeps it).
    expect(events.peek(source, "ses_1")?.liveText.get("msg_2")).toBe("Hello ");
    const second = events.watch(source, "ses_1");
    await second.connected;
    expect(worker.opened()).toBe(2);
    expect(second.signals().liveText.get("msg_2")).toBe("Hello ");
    worker.send("message.part.delta", delta("world"));
    await expect.poll(() => second.signals().liveText.get("msg_2")).toBe(`Hello ${STREAM_GAP}world`);
    expect(second.signals().liveTextPartial.has("msg_2")).toBe(false);
    second.close();
    events.close();
  });
});
