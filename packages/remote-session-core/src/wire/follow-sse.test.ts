import type { EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { followSse, type SseTimers } from "./follow-sse.js";
import { sseComment, sseFrame } from "./sse-frame.js";
import { SseSilentError } from "./sse-silent-error.js";

/** Timers a test fires by hand: silence is a step of the test, never a wait. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  const timers: SseTimers & { fire(): void; armed(): number } = {
    setTimeout: (callback) => {
      pending.set(++next, callback);
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
    fire: () => {
      for (const [handle, callback] of [...pending]) {
        pending.delete(handle);
        callback();
      }
    },
    armed: () => pending.size,
  };
  return timers;
}

/** A body the test writes to, and whether the follower cancelled it. */
function body() {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (state.cancelled = true),
  });
  return { stream, state, write: (text: string) => controller.enqueue(encoder.encode(text)), end: () => controller.close() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("followSse", () => {
  it("without silenceMs arms no timer: a silent stream is followed until the server ends it", async () => {
    const source = body();
    const timers = manualTimers();
    const messages: EventSourceMessage[] = [];
    const followed = followSse({ open: async () => source.stream, onMessage: (m) => messages.push(m), timers });
    await tick();
    expect(timers.armed()).toBe(0);
    source.write(sseFrame({ data: "late" }));
    source.end();
    await followed;
    expect(messages.map((m) => m.data)).toEqual(["late"]);
  });

  it("delivers each message, split across chunks or not, and resolves when the server ends the stream", async () => {
    const source = body();
    const messages: EventSourceMessage[] = [];
    let bytes = 0;
    const followed = followSse({
      open: async () => source.stream,
      onMessage: (m) => messages.push(m),
      onBytes: () => bytes++,
      silenceMs: 1000,
      timers: manualTimers(),
    });
    const frame = sseFrame({ id: "3", event: "message", data: '{"a":1}' });
    source.write(sseComment("open"));
    source.write(frame.slice(0, 9));
    source.write(frame.slice(9) + sseFrame({ data: "two\nlines" }));
    source.end();
    await followed;
    expect(messages).toEqual([
      { id: "3", event: "message", data: '{"a":1}' },
      { id: undefined, event: undefined, data: "two\nlines" },
    ]);
    expect(bytes).toBe(3);
  });

  it("ends a stream that goes silent with SseSilentError and cancels its body; each chunk re-arms the timer", async () => {
    const source = body();
    const timers = manualTimers();
    const followed = followSse({ open: async () => source.stream, onMessage: () => {}, silenceMs: 1000, timers });
    const outcome = followed.catch((error: unknown) => error);
    source.write(sseComment("keepalive"));
    await tick();
    expect(timers.armed()).toBe(1);
    timers.fire();
    const error = await outcome;
    expect(SseSilentError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ message: "the event stream went silent", silenceMs: 1000 });
    expect(source.state.cancelled).toBe(true);
    expect(timers.armed()).toBe(0);
  });

  it("counts a connection that never answers as silent too", async () => {
    const timers = manualTimers();
    const followed = followSse({
      open: (signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("fetch aborted")))),
      onMessage: () => {},
      silenceMs: 1000,
      timers,
    }).catch((error: unknown) => error);
    timers.fire();
    expect(SseSilentError.isInstance(await followed)).toBe(true);
  });

  it("ends with the caller's reason when the caller stops it, and with what open threw", async () => {
    const source = body();
    const stop = new AbortController();
    const followed = followSse({ open: async () => source.stream, onMessage: () => {}, silenceMs: 1000, signal: stop.signal, timers: manualTimers() }).catch(
      (e: unknown) => e,
    );
    await tick();
    stop.abort(new Error("closed by the caller"));
    expect(await followed).toMatchObject({ message: "closed by the caller" });
    expect(source.state.cancelled).toBe(true);
    const refused = new Error("the event stream answered 401");
    await expect(followSse({ open: async () => Promise.reject(refused), onMessage: () => {}, silenceMs: 1000, timers: manualTimers() })).rejects.toBe(refused);
  });
});
