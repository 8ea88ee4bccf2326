import { sseFrame } from "@openwork/remote-session-core/wire";
import { expect, it } from "vitest";
import { followTurn } from "./opencode-turn.js";

/** Timers a test fires by hand: silence is a step of the test, never a wait. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (callback: () => void) => (pending.set(++next, callback), next),
    clearTimeout: (handle: unknown) => void pending.delete(handle as number),
    fire: () => {
      for (const callback of pending.values()) callback();
    },
  };
}

/** An engine event stream the test writes to. */
function engineStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const send = (type: string, properties: Record<string, unknown> = {}) =>
    controller.enqueue(new TextEncoder().encode(sseFrame({ data: JSON.stringify({ type, properties }) })));
  return { response: new Response(body), send, end: () => controller.close() };
}

it("ends a turn whose engine stream goes silent, instead of waiting on it for ever", async () => {
  const engine = engineStream();
  const timers = manualTimers();
  const turn = followTurn(engine.response, "ses_1", () => {}, { silenceMs: 30_000, timers });
  engine.send("server.connected");
  await turn.connected;
  engine.send("session.status", { sessionID: "ses_1", status: { type: "busy" } });
  timers.fire();
  expect(await turn.ended).toEqual({ name: "EngineStreamClosed", data: { message: "the engine's event stream went silent before the turn ended" } });
});

it("ends a turn at idle after busy, and tells a stream that closed first apart from a silent one", async () => {
  const idle = engineStream();
  const done = followTurn(idle.response, "ses_1", () => {}, { timers: manualTimers() });
  idle.send("server.connected");
  idle.send("session.status", { sessionID: "ses_1", status: { type: "busy" } });
  idle.send("session.idle", { sessionID: "ses_1" });
  expect(await done.ended).toBeNull();

  const closed = engineStream();
  const cut = followTurn(closed.response, "ses_1", () => {}, { timers: manualTimers() });
  closed.send("server.connected");
  closed.end();
  expect(await cut.ended).toEqual({ name: "EngineStreamClosed", data: { message: "the engine's event stream closed before the turn ended" } });
});
