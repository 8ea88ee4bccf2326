import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../testing/runner-channel-conformance.js";
import { sendJson, startTestServer, type TestServer } from "../testing/http-test-server.js";
import { recordingTimers } from "../testing/recording-timers.js";
import type { WakeEvent } from "../v1/wake-event.js";
import type { RunnerProtocolError } from "./runner-protocol-error.js";
import { openWakeStream, type WakeStream } from "./wake-stream.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const fastBackoff = { baseMs: 10, maxMs: 50, random: () => 0.5 };
const work = (id: number) =>
  `id: ${id}\nevent: remote_session_work_available\ndata: {"type":"remote_session_work_available","cursor":"${id}","taskId":"rst_${id}"}\n\n`;

async function serve(onConnect: (response: ServerResponse, connection: number, lastEventId: string | undefined) => void) {
  let connections = 0;
  const server: TestServer = await startTestServer((request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.flushHeaders();
    onConnect(response, ++connections, request.headers["last-event-id"] as string | undefined);
  });
  cleanups.push(() => server.close());
  return server;
}

function open(server: TestServer, extra: Partial<Parameters<typeof openWakeStream>[0]> = {}) {
  const events: WakeEvent[] = [];
  const errors: RunnerProtocolError[] = [];
  let opens = 0;
  const stream: WakeStream = openWakeStream({
    client: { eventsUrl: `${server.url}/events`, authorization: async () => "Bearer t" },
    onEvent: (event) => events.push(event),
    onOpen: () => opens++,
    onError: (error) => errors.push(error),
    backoff: fastBackoff,
    ...extra,
  });
  cleanups.push(async () => {
    stream.close();
    await stream.closed;
  });
  return { stream, events, errors, opens: () => opens };
}

describe("wake stream", () => {
  it("delivers events, and resumes after a drop with Last-Event-ID", async () => {
    const seenIds: (string | undefined)[] = [];
    const server = await serve((response, connection, lastEventId) => {
      seenIds.push(lastEventId);
      if (connection === 1) {
        response.write(work(1));
        // The second event arrives in two pieces, as TCP may split it.
        const second = work(2);
        response.write(second.slice(0, 20));
        setTimeout(() => {
          response.write(second.slice(20));
          setTimeout(() => response.destroy(), 20);
        }, 20);
      } else response.write(work(Number(lastEventId) + 1));
    });
    const { events, opens, stream, errors } = open(server);
    await eventually(() => (events.length === 3 ? true : undefined));
    expect(events.map((e) => (e.type === "remote_session_work_available" ? e.taskId : e.type))).toEqual(["rst_1", "rst_2", "rst_3"]);
    expect(seenIds).toEqual([undefined, "2"]);
    expect(opens()).toBe(2);
    expect(stream.lastEventId).toBe("3");
    expect(errors[0]?.code).toBe("network_error");
  });

  it("starts from a given Last-Event-ID", async () => {
    const seenIds: (string | undefined)[] = [];
    const server = await serve((_response, _connection, lastEventId) => seenIds.push(lastEventId));
    const { opens } = open(server, { lastEventId: "41" });
    await eventually(() => (opens() === 1 ? true : undefined));
    expect(seenIds).toEqual(["41"]);
  });

  it("treats a silent stream as dead and reconnects", async () => {
    const server = await serve(() => {});
    const { opens, errors } = open(server, { silenceMs: 100 });
    await eventually(() => (opens() >= 2 ? true : undefined));
    expect(errors[0]).toMatchObject({ code: "timeout" });
  });

  it("keeps a stream with keepalives alive", async () => {
    const server = await serve((response) => {
      const timer = setInterval(() => response.write(`event: keepalive\ndata: {"type":"keepalive"}\n\n`), 30);
      response.on("close", () => clearInterval(timer));
    });
    // Keepalives every 30 ms against a 300 ms silence limit: generous enough for a loaded machine.
    const { opens, events } = open(server, { silenceMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(opens()).toBe(1);
    expect(events.length).toBeGreaterThan(5);
  });

  it("skips events it does not understand", async () => {
    const server = await serve((response) => {
      response.write(`event: automation_work_available\ndata: {"type":"automation_work_available"}\n\n`);
      response.write(`data: not json\n\n`);
      response.write(": a comment\n\n");
      response.write(work(9));
    });
    const { events } = open(server);
    await eventually(() => (events.length === 1 ? true : undefined));
    expect(events[0]).toMatchObject({ cursor: "9" });
  });

  it("reports a refused credential and retries with backoff instead of hammering", async () => {
    const server = await startTestServer((_req, res) => sendJson(res, 401, { error: "runner_unauthorized", message: "no" }));
    cleanups.push(() => server.close());
    const { errors, stream } = open(server, { backoff: { baseMs: 40, maxMs: 1_000, random: () => 0.5 } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    stream.close();
    expect(errors[0]).toMatchObject({ status: 401, credentialRetired: true });
    // 40 + 80 + 160 ms of backoff fit in 400 ms: a handful of attempts, not hundreds.
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    expect(server.requests.length).toBeLessThanOrEqual(5);
  });

  it("waits as long as a full or busy gateway asks (503 with retryAfterMs, or Retry-After alone) before opening again", async () => {
    let calls = 0;
    const server = await startTestServer((_req, res) =>
      ++calls === 1
        ? sendJson(res, 503, { error: "unavailable", message: "full", retryAfterMs: 42_000 }, { "retry-after": "42" })
        : sendJson(res, 503, { error: "unavailable", message: "busy" }, { "retry-after": "7" }),
    );
    cleanups.push(() => server.close());
    // Every wait runs at once and is recorded, but the silence watchdog's, which never fires here.
    const recording = recordingTimers();
    const timers = {
      ...recording,
      setTimeout: (callback: () => void, ms: number) => (ms === 999_999 ? setTimeout(() => {}, 0) : recording.setTimeout(callback, ms)),
    };
    const { errors, stream } = open(server, { timers, silenceMs: 999_999 });
    await eventually(() => (errors.length >= 3 ? true : undefined));
    stream.close();
    expect(errors[0]).toMatchObject({ code: "unavailable", status: 503, retryAfterMs: 42_000 });
    // Its backoff (10 ms here) would have sent it back at once: it waited what each answer said.
    expect(recording.delays).toContain(42_000);
    expect(recording.delays).toContain(7_000);
  });
});
