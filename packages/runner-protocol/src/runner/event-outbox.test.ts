import { describe, expect, it } from "vitest";
import type { RunnerClient } from "../client/runner-client.js";
import type { Timers } from "../timers.js";
import type { TaskEvent } from "../v1/task-events.js";
import { type Coalescing, EventOutbox } from "./event-outbox.js";

/** A clock the test moves: timers fire only when `advance` passes their time. */
function manualClock(): Timers & { advance(ms: number): Promise<void> } {
  let now = 0;
  let next = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    setTimeout: (callback, ms) => {
      pending.set(++next, { at: now + ms, callback });
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
    advance: async (ms) => {
      const until = now + ms;
      for (;;) {
        await settle();
        const due = [...pending.entries()].filter(([, timer]) => timer.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].callback();
      }
      now = until;
      await settle();
    },
  };
}

/** A client whose posts are recorded with the clock's time, answered at once. */
function recordingClient(timers: Timers) {
  const posts: { at: number; events: TaskEvent[] }[] = [];
  const client = {
    postEvents: async (_taskId: string, _attempt: number, events: TaskEvent[]) => {
      posts.push({ at: timers.now(), events });
      return { nextSequence: events.at(-1)!.sequence + 1 };
    },
  } as unknown as RunnerClient;
  return { client, posts };
}

const COALESCING: Coalescing = { windowMs: 100, maxWindowMs: 1_000 };
const delta = (text: string) => ({ type: "assistant.delta", payload: { messageId: "m1", text } }) as const;

function outboxWith(coalescing?: Coalescing) {
  const timers = manualClock();
  const { client, posts } = recordingClient(timers);
  const outbox = new EventOutbox({ client, taskId: "rst_x", attempt: 1, timers, signal: new AbortController().signal, ...(coalescing ? { coalescing } : {}) });
  return { timers, posts, outbox };
}

describe("EventOutbox coalescing", () => {
  it("does not post a lone running status (the claim said so): it leaves with the turn's first content, at once", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    outbox.emit({ type: "status", payload: { status: "running" } });
    await timers.advance(40);
    expect(posts).toEqual([]);
    outbox.emit(delta("Hello"));
    await timers.advance(0);
    expect(posts.map((p) => [p.at, p.events.map((e) => e.type)])).toEqual([[40, ["status", "assistant.delta"]]]);
  });

  it("posts a running status that no content follows after one window", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    outbox.emit({ type: "status", payload: { status: "running" } });
    await timers.advance(COALESCING.windowMs);
    expect(posts.map((p) => [p.at, p.events.map((e) => e.type)])).toEqual([[COALESCING.windowMs, ["status"]]]);
  });

  it("sends the first text at once, then a streaming turn as few posts whose deltas concatenate, numbered without gaps", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    // A delta every 10 ms for 3 s: 300 deltas.
    for (let i = 0; i < 300; i++) {
      outbox.emit(delta(`w${i} `));
      await timers.advance(10);
    }
    await outbox.flush();
    expect(posts[0]).toEqual({ at: 0, events: [expect.objectContaining({ sequence: 1, payload: { messageId: "m1", text: "w0 " } })] });
    // Windows of 100, 200, 400, 800 ms, then 1 s: a handful of posts, not 300.
    expect(posts.length).toBeLessThanOrEqual(8);
    const events = posts.flatMap((post) => post.events);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => (e.type === "assistant.delta" ? e.payload.text : "")).join("")).toBe(Array.from({ length: 300 }, (_, i) => `w${i} `).join(""));
    const gaps = posts.slice(1).map((post, i) => post.at - posts[i]!.at);
    expect(gaps.every((gap) => gap <= COALESCING.maxWindowMs)).toBe(true);
  });

  it("posts a request for the human at once, whatever the window", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    outbox.emit(delta("a"));
    await timers.advance(1);
    outbox.emit(delta("b"));
    await timers.advance(5);
    outbox.emit({ type: "input.requested", payload: { requestId: "per_1", kind: "permission", title: "Run ls", detail: "ls" } });
    await timers.advance(1);
    expect(posts.map((post) => post.events.map((e) => e.type))).toEqual([["assistant.delta"], ["assistant.delta", "input.requested"]]);
    expect(posts[1]!.at).toBeLessThan(COALESCING.windowMs);
  });

  it("keeps the deltas of different messages apart and never merges past the protocol's delta size", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    outbox.emit(delta("first"));
    await timers.advance(1);
    outbox.emit(delta("x".repeat(15_000)));
    outbox.emit(delta("y".repeat(2_000)));
    outbox.emit({ type: "assistant.delta", payload: { messageId: "m2", text: "other" } });
    await outbox.flush();
    const texts = posts.flatMap((post) => post.events).map((e) => (e.type === "assistant.delta" ? `${e.payload.messageId}:${e.payload.text.length}` : e.type));
    expect(texts).toEqual(["m1:5", "m1:15000", "m1:2000", "m2:5"]);
  });

  it("without coalescing, posts each event as soon as no post is in flight (protocol 2)", async () => {
    const { timers, posts, outbox } = outboxWith();
    for (let i = 0; i < 5; i++) {
      outbox.emit(delta(`${i}`));
      await timers.advance(10);
    }
    await outbox.flush();
    expect(posts.map((post) => post.events.length)).toEqual([1, 1, 1, 1, 1]);
  });

  it("hands the tail to the completion numbered after what was posted", async () => {
    const { timers, posts, outbox } = outboxWith(COALESCING);
    outbox.emit(delta("a"));
    await timers.advance(1);
    outbox.emit(delta("b"));
    outbox.emit({ type: "terminal", payload: { status: "done" } });
    const tail = await outbox.detachTail();
    expect(posts.flatMap((post) => post.events.map((e) => e.sequence))).toEqual([1]);
    expect(tail.map((e) => [e.sequence, e.type])).toEqual([
      [2, "assistant.delta"],
      [3, "terminal"],
    ]);
  });
});

describe("EventOutbox and the gateway's stop", () => {
  it("calls onCancel when a post's answer asks the attempt to stop, and only then", async () => {
    const timers = manualClock();
    let cancels = 0;
    let answers = 0;
    const client = {
      postEvents: async (_taskId: string, _attempt: number, events: TaskEvent[]) => ({
        nextSequence: events.at(-1)!.sequence + 1,
        ...(++answers === 2 ? { cancelRequested: true } : {}),
      }),
    } as unknown as RunnerClient;
    const outbox = new EventOutbox({ client, taskId: "rst_x", attempt: 1, timers, signal: new AbortController().signal, onCancel: () => cancels++ });
    outbox.emit(delta("one"));
    await timers.advance(0);
    expect(cancels).toBe(0);
    outbox.emit(delta("two"));
    await timers.advance(0);
    expect(cancels).toBe(1);
  });
});
