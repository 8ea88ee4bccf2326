import { afterEach, describe, expect, it } from "vitest";
import { createRunnerClient } from "../client/runner-client.js";
import { startProtocolDouble } from "../testing/protocol-double.js";
import { eventually } from "../testing/runner-channel-conformance.js";
import { type Runner, type RunRunnerOptions, runRunner } from "./run-runner.js";
import type { SessionMcp } from "../v1/session-mcp.js";
import type { TaskOutcome } from "./run-task.js";
import { taskAbortReason } from "./task-aborted.js";

const fastBackoff = { baseMs: 10, maxMs: 50, random: () => 0.5 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  options: { fetch?: typeof fetch; heartbeatIntervalMs?: number; sessionMcp?: (taskId: string) => SessionMcp; completionsFindNothing?: boolean } = {},
) {
  const double = await startProtocolDouble({
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 100,
    ...(options.sessionMcp ? { sessionMcp: options.sessionMcp } : {}),
    ...(options.completionsFindNothing ? { completionsFindNothing: true } : {}),
  });
  cleanups.push(() => double.close());
  const { token } = await double.registerRunner({ runnerId: "runner-under-test" });
  const client = createRunnerClient({
    baseUrl: double.baseUrl,
    token,
    retry: { limit: 1, backoff: fastBackoff },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const ended: TaskOutcome[] = [];
  const start = (extra: Partial<RunRunnerOptions> & Pick<RunRunnerOptions, "handlers">): Runner => {
    const runner = runRunner({ client, backoff: fastBackoff, onTaskEnd: (o) => ended.push(o), ...extra });
    cleanups.push(() => runner.stop());
    return runner;
  };
  const endOf = (taskId: string) => eventually(() => ended.find((o) => o.taskId === taskId));
  return { double, client, start, ended, endOf };
}

const done = async () => ({ status: "done" as const, localSessionId: "ses_1" });

describe("runRunner", () => {
  it("refuses, before it starts, a handler of the host's kinds named like a remote-session kind or malformed", async () => {
    const { start } = await setup();
    const work = async () => ({ status: "done" as const });
    expect(() => start({ handlers: {}, workHandlers: { "remote_session.create": work } })).toThrow(TypeError);
    expect(() => start({ handlers: {}, workHandlers: { automation: work } })).toThrow(/dotted lowercase words/);
  });

  it("finds work with the backstop poll when there is no wake stream", async () => {
    const { double, start, endOf } = await setup();
    start({ handlers: { "remote_session.create": done }, wakeStream: false, pollIntervalMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    expect((await endOf(taskId)).status).toBe("done");
  });

  it("does not poll while its wake stream is open: a lost hint costs the stream's backstop interval, not the short poll", async () => {
    const { double, start, endOf } = await setup();
    start({ handlers: { "remote_session.create": done }, pollIntervalMs: 100, streamPollIntervalMs: 1_500 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    // The look the stream's opening made is over; from here a 100 ms poll would ask ten times a second.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const asked = double.claimNexts() + double.requests.filter((r) => r.path.endsWith("/work")).length;
    double.dropHints(true);
    const queuedAt = Date.now();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await double.inspect(taskId)).state).toBe("queued");
    expect(double.claimNexts() + double.requests.filter((r) => r.path.endsWith("/work")).length).toBe(asked);
    expect((await endOf(taskId)).status).toBe("done");
    expect(Date.now() - queuedAt).toBeLessThan(1_500 + 1_000);
  });

  it("polls at the short interval once its wake stream is down, its first look at a random point of it (a fleet cut off together does not ask together)", async () => {
    let streamDown = false;
    const refusing: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      // The wake stream only (a task's `…/tasks/:id/events` posts still go through).
      return streamDown && url.endsWith("/v1/desktop-runner/events") ? Promise.reject(new TypeError("stream refused")) : fetch(input, init);
    };
    const { double, start, endOf } = await setup({ fetch: refusing });
    start({ handlers: { "remote_session.create": done }, pollIntervalMs: 150, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    streamDown = true;
    double.dropHints(true);
    double.closeStreams();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    const queuedAt = Date.now();
    expect((await endOf(taskId)).status).toBe("done");
    expect(Date.now() - queuedAt).toBeLessThan(1_000);
  });

  it("with a gateway of protocol 5, looks at a (re)opening only when the stream's first event says work waits", async () => {
    const { double, start, endOf } = await setup();
    start({ handlers: { "remote_session.create": done }, gatewayProtocolVersion: 5, pollIntervalMs: 600_000, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The loop's first look as it started; the opening said nothing waits, so it asked nothing more.
    expect(double.claimNexts()).toBe(1);
    // A hint lost while the stream is cut: the reopening says work waits, and the runner takes it.
    double.dropHints(true);
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    double.closeStreams();
    expect((await endOf(taskId)).status).toBe("done");
    expect(double.claimNexts()).toBeGreaterThan(1);
  });

  it("with a gateway of protocol 5, an opening that says no work waits counts as a look: the short poll begun before the stream opened does not ask again", async () => {
    const { double, start } = await setup();
    start({ handlers: { "remote_session.create": done }, gatewayProtocolVersion: 5, pollIntervalMs: 300, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(double.claimNexts()).toBe(1);
  });

  /** A fetch that answers the next `refusals` wake-stream opens 503 with a turn of `turnMs`, as a busy gateway does. */
  function busyAfterDrop(turnMs: number) {
    const state = { refusals: 0 };
    const fetchThrough: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (state.refusals > 0 && url.endsWith("/v1/desktop-runner/events")) {
        state.refusals--;
        const body = JSON.stringify({ error: "unavailable", message: "too many opens; come back at your turn", retryAfterMs: turnMs });
        return Promise.resolve(new Response(body, { status: 503, headers: { "content-type": "application/json" } }));
      }
      return fetch(input, init);
    };
    return { state, fetchThrough };
  }

  it("after a drop, a stream the gateway gave a turn has its runner wait for the turn, not ask at once: back by then, it asks nothing", async () => {
    const busy = busyAfterDrop(400);
    const { double, start } = await setup({ fetch: busy.fetchThrough });
    // Without the turn, the first look after the drop would come at 100 ms (half the short poll).
    start({ handlers: { "remote_session.create": done }, gatewayProtocolVersion: 5, pollIntervalMs: 200, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(double.claimNexts()).toBe(1);
    busy.state.refusals = 1;
    double.closeStreams();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(busy.state.refusals).toBe(0);
    expect(double.openStreams()).toBe(1);
    expect(double.claimNexts()).toBe(1);
  });

  it("after a drop, a reopening still unanswered (a gateway slow to accept) is waited for: back, it asks nothing", async () => {
    let slow = false;
    const slowStream: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (slow && url.endsWith("/v1/desktop-runner/events")) await new Promise((resolve) => setTimeout(resolve, 350));
      return fetch(input, init);
    };
    const { double, start } = await setup({ fetch: slowStream });
    // Without the wait, the first look after the drop would come at 200 ms (half the short poll), before the answer at 350 ms.
    start({ handlers: { "remote_session.create": done }, gatewayProtocolVersion: 5, pollIntervalMs: 400, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
    slow = true;
    double.closeStreams();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(double.openStreams()).toBe(1);
    expect(double.claimNexts()).toBe(1);
  });

  it("after a drop, a stream refused again past its turn (a full gateway) has its runner look then", async () => {
    const busy = busyAfterDrop(400);
    const { double, start } = await setup({ fetch: busy.fetchThrough });
    start({ handlers: { "remote_session.create": done }, gatewayProtocolVersion: 5, pollIntervalMs: 200, streamPollIntervalMs: 600_000 });
    await eventually(() => (double.openStreams() > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
    busy.state.refusals = 2;
    double.closeStreams();
    await eventually(() => (double.claimNexts() > 1 ? true : undefined), 1_500);
    expect(busy.state.refusals).toBe(0);
  });

  it("polls at once on wake() (power resume)", async () => {
    const { double, start, endOf } = await setup();
    const runner = start({ handlers: { "remote_session.create": done }, wakeStream: false, pollIntervalMs: 600_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await double.inspect(taskId)).state).toBe("queued");
    runner.wake();
    expect((await endOf(taskId)).status).toBe("done");
  });

  it("drains every waiting task, no more at once than its concurrency", async () => {
    const { double, start, ended } = await setup();
    const ids = await Promise.all([1, 2, 3, 4, 5].map((n) => double.enqueueCreate({ title: `t${n}`, prompt: null })));
    let active = 0;
    let peak = 0;
    start({
      concurrency: 2,
      wakeStream: false,
      pollIntervalMs: 600_000,
      handlers: {
        "remote_session.create": async () => {
          peak = Math.max(peak, ++active);
          await new Promise((resolve) => setTimeout(resolve, 60));
          active--;
          return done();
        },
      },
    });
    await eventually(() => (ended.length === ids.length ? true : undefined));
    expect(peak).toBe(2);
    for (const { taskId } of ids) expect((await double.inspect(taskId)).state).toBe("done");
  });

  it("takes an answer while its only slot runs the turn waiting for it", async () => {
    const { double, start, endOf } = await setup();
    await double.registerRunner({ runnerId: "runner-under-test", capabilities: ["session_create_v1", "session_respond_v1"] });
    let answered: (answer: unknown) => void = () => {};
    const answer = new Promise((resolve) => (answered = resolve));
    start({
      concurrency: 1,
      handlers: {
        "remote_session.create": async () => {
          await answer;
          return done();
        },
        "remote_session.respond": async (assignment) => {
          answered(assignment.answer);
          return done();
        },
      },
    });
    const turn = await double.enqueueCreate({ title: "asks", prompt: "p" });
    await eventually(async () => ((await double.inspect(turn.taskId)).state === "claimed" ? true : undefined));
    const reply = await double.enqueueRespond({ runnerId: "runner-under-test", requestId: "per_1", answer: { permission: "once" } });
    expect((await endOf(reply.taskId)).status).toBe("done");
    expect(await answer).toEqual({ permission: "once" });
    expect((await endOf(turn.taskId)).status).toBe("done");
  });

  it("claims with claim-next from a protocol-3 gateway: no work listing, and the last events ride on the completion", async () => {
    const { double, start, endOf } = await setup();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: "p" });
    start({
      gatewayProtocolVersion: 3,
      handlers: {
        "remote_session.create": async (_assignment, { emit }) => {
          emit({ type: "assistant.final", payload: { messageId: "m1", text: "done" } });
          return done();
        },
      },
    });
    expect((await endOf(taskId)).status).toBe("done");
    const task = await double.inspect(taskId);
    expect(task.events.map((e) => e.type)).toEqual(["assistant.final", "terminal"]);
    expect(task.completion).toMatchObject({ status: "done" });
    const paths = double.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths.some((p) => p.endsWith("/work"))).toBe(false);
    expect(paths.filter((p) => p.endsWith(`/tasks/${taskId}/events`))).toEqual([]);
    expect(double.claimNexts()).toBeGreaterThan(0);
  });

  it("does not look for work again when its completion already found none (protocol 3)", async () => {
    const { double, start, endOf } = await setup();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: "p" });
    start({ gatewayProtocolVersion: 3, concurrency: 1, handlers: { "remote_session.create": done } });
    expect((await endOf(taskId)).nothingNext).toBe(true);
    // The claim that found the task, and no other: the completion looked for the next one itself.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(double.claimNexts()).toBe(1);
    // New work still reaches the runner, through its wake stream.
    const second = await double.enqueueCreate({ title: "t2", prompt: "p" });
    expect((await endOf(second.taskId)).status).toBe("done");
  });

  it("looks again after a completion that found nothing when work was announced while its slot was busy", async () => {
    // A gateway whose completions' look for a next task always came before the work was queued.
    const { double, start, endOf } = await setup({ completionsFindNothing: true });
    const first = await double.enqueueCreate({ title: "t1", prompt: "p" });
    let second: { taskId: string } | undefined;
    start({
      gatewayProtocolVersion: 3,
      concurrency: 1,
      pollIntervalMs: 60_000,
      handlers: {
        "remote_session.create": async (assignment) => {
          // Announced while this task holds the only slot: the runner cannot claim it yet.
          if (assignment.taskId === first.taskId) {
            second = await double.enqueueCreate({ title: "t2", prompt: "p" });
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          return done();
        },
      },
    });
    expect((await endOf(first.taskId)).nothingNext).toBe(true);
    expect((await endOf(second!.taskId)).status).toBe("done");
  });

  it("claims again at once only while the gateway says more waits (protocol 3)", async () => {
    const { double, start, endOf } = await setup();
    const tasks = await Promise.all([1, 2, 3].map((i) => double.enqueueCreate({ title: `t${i}`, prompt: "p" })));
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    start({
      gatewayProtocolVersion: 3,
      concurrency: 4,
      wakeStream: false,
      pollIntervalMs: 60_000,
      handlers: { "remote_session.create": async () => (await held, done()) },
    });
    await eventually(() => (double.claimNexts() >= 3 ? true : undefined));
    // Three tasks, three claims: the last answered `more: false`, so no fourth that finds nothing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(double.claimNexts()).toBe(3);
    release();
    for (const { taskId } of tasks) expect((await endOf(taskId)).status).toBe("done");
  });

  it("hands the turn's MCP entry to its handler, and refreshes it through heartbeats before it expires", async () => {
    let issued = 0;
    // Each entry lives 600 ms: with heartbeats every 100 ms, the one past its first third asks for a fresh one.
    const sessionMcp = () => ({ url: "http://gw/mcp/agent", authorization: `Bearer owsc1.${++issued}`, expiresAt: new Date(Date.now() + 600).toISOString() });
    const { double, start, endOf } = await setup({ heartbeatIntervalMs: 100, sessionMcp });
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: "p" });
    const seen: string[] = [];
    start({
      wakeStream: false,
      pollIntervalMs: 50,
      handlers: {
        "remote_session.create": async (_assignment, { mcp }) => {
          seen.push(mcp.current()!.authorization);
          mcp.onChange((entry) => seen.push(entry.authorization));
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          return done();
        },
      },
    });
    await endOf(taskId);
    expect(seen[0]).toBe("Bearer owsc1.1");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    // Never while the entry was fresh: one ask per lifetime, give or take a heartbeat.
    expect(issued).toBeLessThanOrEqual(4);
    const asked = double.requests.filter((r) => r.path.endsWith("/heartbeat") && r.body.includes(`"refreshMcp":true`));
    expect(asked.length).toBe(issued - 1);
  });

  it("heartbeats while the handler runs", async () => {
    const { double, start, endOf } = await setup({ heartbeatIntervalMs: 100 });
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    start({
      wakeStream: false,
      handlers: { "remote_session.create": async () => (await new Promise((r) => setTimeout(r, 700)), done()) },
    });
    await endOf(taskId);
    const beats = double.requests.filter((r) => r.path.endsWith(`/tasks/${taskId}/heartbeat`));
    // Every 100 ms for 700 ms: at least three, even on a loaded machine.
    expect(beats.length).toBeGreaterThanOrEqual(3);
  });

  // The double's lease is 3 s, its heartbeats 100 ms apart: an outage of the task routes for 1 s
  // fails some ten heartbeats in a row while the lease still holds.
  const outage =
    (from: () => number | undefined, ms: number): typeof fetch =>
    (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const since = from();
      const down = since !== undefined && Date.now() - since < ms && /\/tasks\/[^/]+\/(heartbeat|events|complete)$/.test(url);
      return down ? Promise.reject(new TypeError("fetch failed")) : fetch(input, init);
    };

  it("holds its task through failed heartbeats while the lease it last heard of still runs", async () => {
    let claimedAt: number | undefined;
    const { double, start, endOf } = await setup({ heartbeatIntervalMs: 100, fetch: outage(() => claimedAt, 1_000) });
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    start({
      wakeStream: false,
      pollIntervalMs: 50,
      handlers: {
        "remote_session.create": async () => {
          claimedAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 1_300));
          return done();
        },
      },
    });
    expect((await endOf(taskId)).status).toBe("done");
    expect((await double.inspect(taskId)).completion?.status).toBe("done");
  });

  it("gives its task up once the heartbeats fail past the lease's end", async () => {
    let claimedAt: number | undefined;
    const { double, start, ended } = await setup({ heartbeatIntervalMs: 100, fetch: outage(() => claimedAt, 60_000) });
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    let aborted: string | undefined;
    start({
      wakeStream: false,
      pollIntervalMs: 50,
      handlers: {
        "remote_session.create": async (_a, { signal }) => {
          claimedAt = Date.now();
          await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
          aborted = taskAbortReason(signal);
          return done();
        },
      },
    });
    const outcome = await eventually(() => ended.find((o) => o.taskId === taskId), 15_000);
    expect(outcome.status).toBe("lease_lost");
    expect(aborted).toBe("lease_lost");
    // Not after two misses (some 300 ms) but once the lease granted at the claim (3 s) ran out.
    expect(Date.now() - claimedAt!).toBeGreaterThanOrEqual(2_500);
  });

  it("keeps events in order and completes despite transient network failures", async () => {
    let calls = 0;
    const flaky: typeof fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (/\/(events|complete)$/.test(url) && !url.endsWith("/desktop-runner/events") && calls++ % 2 === 0) {
        return Promise.reject(new TypeError("fetch failed"));
      }
      return fetch(input, init);
    };
    const { double, start, endOf } = await setup({ fetch: flaky });
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    start({
      wakeStream: false,
      handlers: {
        "remote_session.create": async (_a, { emit }) => {
          for (let i = 0; i < 20; i++) {
            emit({ type: "assistant.delta", payload: { messageId: "m1", text: `${i} ` } });
            if (i % 5 === 0) await new Promise((r) => setTimeout(r, 5));
          }
          return done();
        },
      },
    });
    expect((await endOf(taskId)).status).toBe("done");
    const seen = await double.inspect(taskId);
    expect(seen.events.map((e) => e.sequence)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(seen.events.slice(0, 20).map((e) => (e.type === "assistant.delta" ? e.payload.text : ""))).toEqual(Array.from({ length: 20 }, (_, i) => `${i} `));
    expect(seen.completion?.status).toBe("done");
    expect(calls).toBeGreaterThan(2);
  });

  it("completes a task whose handler throws as failed (execution_failed)", async () => {
    const { double, start, endOf } = await setup();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    start({
      wakeStream: false,
      handlers: {
        "remote_session.create": async () => {
          throw new Error("engine crashed");
        },
      },
    });
    expect((await endOf(taskId)).status).toBe("failed");
    const seen = await double.inspect(taskId);
    expect(seen.completion).toMatchObject({ status: "failed", error: { code: "execution_failed", message: "engine crashed" } });
    expect(seen.events.at(-1)).toMatchObject({ type: "terminal", payload: { status: "failed" } });
  });

  it("on stop(), aborts running handlers (runner_stopped) and completes nothing", async () => {
    const { double, start } = await setup();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    let reason: string | undefined;
    let running = false;
    const runner = start({
      wakeStream: false,
      handlers: {
        "remote_session.create": (_a, { signal }) => {
          running = true;
          return new Promise((resolve) =>
            signal.addEventListener("abort", () => {
              reason = taskAbortReason(signal);
              resolve({ status: "done", localSessionId: "ses_1" });
            }),
          );
        },
      },
    });
    // The handler runs (the claim's answer arrived), not merely the gateway recorded the claim.
    await eventually(() => (running ? true : undefined));
    expect((await double.inspect(taskId)).state).toBe("claimed");
    await runner.stop();
    expect(reason).toBe("runner_stopped");
    expect((await double.inspect(taskId)).completion).toBeNull();
  });

  it("does not claim kinds it has no handler for", async () => {
    const { double, start } = await setup();
    const { taskId } = await double.enqueueCreate({ title: "t", prompt: null });
    start({ wakeStream: false, handlers: {} });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await double.inspect(taskId)).state).toBe("queued");
    expect(double.requests.filter((r) => r.path.includes("/claim"))).toHaveLength(0);
  });
});
