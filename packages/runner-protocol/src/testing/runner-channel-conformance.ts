import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunnerClient, type RunnerClient } from "../client/runner-client.js";
import { RunnerProtocolError } from "../client/runner-protocol-error.js";
import { type Runner, runRunner } from "../runner/run-runner.js";
import type { TaskOutcome } from "../runner/run-task.js";
import { type TaskAbortReason, taskAbortReason } from "../runner/task-aborted.js";
import { RUNNER_PATHS, RUNNER_ROUTE_PREFIX } from "../v1/paths.js";
import type { RunnerChannelHarness } from "./runner-channel-harness.js";

const fastRetry = { limit: 2, backoff: { baseMs: 20, maxMs: 100, random: () => 0.5 } };

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The runner channel's conformance suite: the runner-side client and `runRunner` against a
 * gateway. runner-protocol runs it against its in-memory double; desktop-target runs the very
 * same suite against its real routes and Postgres.
 */
export function describeRunnerChannel(name: string, makeHarness: () => Promise<RunnerChannelHarness>): void {
  describe(`runner channel conformance: ${name}`, () => {
    let harness: RunnerChannelHarness;
    let runnerCount = 0;
    const runners: Runner[] = [];

    beforeAll(async () => {
      harness = await makeHarness();
    });
    afterAll(async () => {
      await Promise.all(runners.map((r) => r.stop()));
      await harness.close();
    });

    const newClient = async (capabilities?: string[]): Promise<{ client: RunnerClient; runnerId: string }> => {
      const runnerId = `conformance-runner-${++runnerCount}-${Date.now()}`;
      const { token } = await harness.registerRunner({ runnerId, ...(capabilities ? { capabilities } : {}) });
      const client = createRunnerClient({
        baseUrl: harness.baseUrl,
        ...(harness.prefix ? { prefix: harness.prefix } : {}),
        token,
        retry: fastRetry,
      });
      return { client, runnerId };
    };
    const startRunner = (client: RunnerClient, handlers: Parameters<typeof runRunner>[0]["handlers"], onTaskEnd?: (o: TaskOutcome) => void) => {
      const runner = runRunner({
        client,
        handlers,
        // A long backstop: anything faster than this came through the wake stream.
        pollIntervalMs: 600_000,
        backoff: fastRetry.backoff,
        ...(onTaskEnd ? { onTaskEnd } : {}),
      });
      runners.push(runner);
      return runner;
    };

    // First: claim-next takes the oldest task the runner may take, and no other test has left one yet.
    it("(protocol 3) claims with claim-next, and takes the attempt's last events on the completion", async () => {
      const { client, runnerId } = await newClient();
      expect(await client.claimNext()).toBeNull();
      const { taskId } = await harness.enqueueCreate({ title: "next", prompt: "p", runnerId });
      expect(await client.claimNext(["remote_session.send"])).toBeNull();
      expect(await client.claimNext()).toMatchObject({ taskId, kind: "remote_session.create", attempt: 1, title: "next" });
      expect(await client.claimNext()).toBeNull();
      const bound = { sequence: 1, type: "session.bound" as const, payload: { localSessionId: "ses_next" } };
      await client.postEvents(taskId, 1, [bound]);
      // A gap is refused whole: nothing is completed.
      const gap = [{ sequence: 3, type: "terminal" as const, payload: { status: "done" as const } }];
      const refused = await client.complete(taskId, { attempt: 1, status: "done", localSessionId: "ses_next", events: gap }).catch((e: unknown) => e);
      expect(RunnerProtocolError.isInstance(refused) && refused.status).toBe(409);
      expect((await harness.inspect(taskId)).state).toBe("claimed");
      // The events already held may be replayed alongside the new ones; the completion replays too.
      const events = [bound, { sequence: 2, type: "assistant.final" as const, payload: { messageId: "m1", text: "hi" } }];
      const body = { attempt: 1, status: "done" as const, localSessionId: "ses_next", events };
      expect(await client.complete(taskId, body)).toMatchObject({ taskId, state: "done" });
      expect(await client.complete(taskId, body)).toMatchObject({ taskId, state: "done" });
      const seen = await harness.inspect(taskId);
      expect(seen.events.map((e) => [e.sequence, e.type])).toEqual([
        [1, "session.bound"],
        [2, "assistant.final"],
      ]);
      expect(seen.completion).toEqual({ attempt: 1, status: "done", localSessionId: "ses_next" });
    });

    it("(protocol 3) claims the runner's next task with its completion, and hands the same one to a replay", async () => {
      const { client, runnerId } = await newClient();
      const first = await harness.enqueueCreate({ title: "first", prompt: "p", runnerId });
      const second = await harness.enqueueCreate({ title: "second", prompt: "p", runnerId });
      const assignment = await client.claimNext();
      expect(assignment?.taskId).toBe(first.taskId);
      const body = { attempt: 1, status: "done" as const, localSessionId: "ses_first", next: {} };
      const answer = await client.complete(first.taskId, body);
      expect(answer.next).toMatchObject({ taskId: second.taskId, attempt: 1, title: "second" });
      expect((await client.complete(first.taskId, body)).next).toMatchObject({ taskId: second.taskId, attempt: 1 });
      expect((await client.complete(second.taskId, { attempt: 1, status: "done", localSessionId: "ses_second", next: {} })).next).toBeNull();
    });

    it("offers a pinned task to its runner only, and a claim race has one winner", async () => {
      const a = await newClient();
      const b = await newClient();
      const { taskId } = await harness.enqueueCreate({ title: "pinned", prompt: null, runnerId: a.runnerId });
      expect((await a.client.work()).items.map((i) => i.taskId)).toContain(taskId);
      expect((await b.client.work()).items.map((i) => i.taskId)).not.toContain(taskId);

      const open = await harness.enqueueCreate({ title: "race", prompt: "hello" });
      const results = await Promise.allSettled([a.client.claim(open.taskId), b.client.claim(open.taskId)]);
      const winners = results.filter((r) => r.status === "fulfilled");
      expect(winners).toHaveLength(1);
      const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(RunnerProtocolError.isInstance(loser.reason) && [404, 409].includes(loser.reason.status ?? 0)).toBe(true);
      const assignment = (winners[0] as PromiseFulfilledResult<Awaited<ReturnType<RunnerClient["claim"]>>>).value;
      expect(assignment).toMatchObject({ taskId: open.taskId, kind: "remote_session.create", attempt: 1, title: "race", prompt: "hello" });
    });

    it("runs a task end to end: wake-up on the stream, ordered events, a done completion", async () => {
      const { client } = await newClient();
      const ended: TaskOutcome[] = [];
      startRunner(
        client,
        {
          "remote_session.create": async (assignment, { emit }) => {
            emit({ type: "session.bound", payload: { localSessionId: "ses_local_1" } });
            emit({ type: "status", payload: { status: "running" } });
            for (const piece of ["Hel", "lo"]) emit({ type: "assistant.delta", payload: { messageId: "m1", text: piece } });
            emit({ type: "assistant.final", payload: { messageId: "m1", text: `Hello: ${assignment.title}` } });
            return { status: "done", localSessionId: "ses_local_1", summary: "created" };
          },
        },
        (outcome) => ended.push(outcome),
      );
      // Let the stream open first: work enqueued later can only arrive through a wake-up.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const { taskId } = await harness.enqueueCreate({ title: "greet", prompt: "say hello" });
      const outcome = await eventually(() => ended.find((o) => o.taskId === taskId), 3_000);
      expect(outcome.status).toBe("done");
      const seen = await harness.inspect(taskId);
      expect(seen.state).toBe("done");
      expect(seen.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(seen.events.map((e) => e.type)).toEqual(["session.bound", "status", "assistant.delta", "assistant.delta", "assistant.final", "terminal"]);
      expect(seen.completion).toMatchObject({ status: "done", localSessionId: "ses_local_1", attempt: 1 });
    });

    it("passes cancelRequested to the handler and completes the task as cancelled", async () => {
      const { client, runnerId } = await newClient();
      const reasons: (TaskAbortReason | undefined)[] = [];
      const ended: TaskOutcome[] = [];
      const { taskId } = await harness.enqueueCreate({ title: "slow", prompt: "take your time", runnerId });
      startRunner(
        client,
        {
          "remote_session.create": (_assignment, { signal, emit }) =>
            new Promise((_resolve, reject) => {
              emit({ type: "status", payload: { status: "running" } });
              signal.addEventListener("abort", () => {
                reasons.push(taskAbortReason(signal));
                reject(signal.reason);
              });
            }),
        },
        (outcome) => ended.push(outcome),
      );
      await eventually(async () => ((await harness.inspect(taskId)).events.length > 0 ? true : undefined));
      await harness.requestCancel(taskId);
      const outcome = await eventually(() => ended.find((o) => o.taskId === taskId), 5_000);
      expect(outcome.status).toBe("cancelled");
      expect(reasons).toEqual(["cancel_requested"]);
      const seen = await harness.inspect(taskId);
      expect(seen.completion).toMatchObject({ status: "cancelled" });
      expect(seen.events.at(-1)).toMatchObject({ type: "terminal", payload: { status: "cancelled" } });
    });

    it("aborts the handler when the lease is lost, keeps its events, and completes nothing", async () => {
      const { client, runnerId } = await newClient();
      const reasons: (TaskAbortReason | undefined)[] = [];
      const ended: TaskOutcome[] = [];
      const { taskId } = await harness.enqueueCreate({ title: "doomed", prompt: "work", runnerId });
      startRunner(
        client,
        {
          "remote_session.create": (_assignment, { signal, emit }) =>
            new Promise((resolve) => {
              emit({ type: "assistant.delta", payload: { messageId: "m1", text: "partial" } });
              signal.addEventListener("abort", () => {
                reasons.push(taskAbortReason(signal));
                resolve({ status: "done", localSessionId: "ses_late" });
              });
            }),
        },
        (outcome) => ended.push(outcome),
      );
      await eventually(async () => ((await harness.inspect(taskId)).events.length > 0 ? true : undefined));
      await harness.loseLease(taskId);
      const outcome = await eventually(() => ended.find((o) => o.taskId === taskId), 5_000);
      expect(outcome.status).toBe("lease_lost");
      expect(reasons).toEqual(["lease_lost"]);
      const seen = await harness.inspect(taskId);
      expect(seen.state).toBe("interrupted");
      expect(seen.completion).toBeNull();
      expect(seen.events).toEqual([expect.objectContaining({ sequence: 1, type: "assistant.delta" })]);
    });

    it("accepts identical replays and answers gaps and changed replays with a 409", async () => {
      const { client, runnerId } = await newClient();
      const { taskId } = await harness.enqueueCreate({ title: "replay", prompt: null, runnerId });
      const { attempt } = await client.claim(taskId);
      const first = { sequence: 1, type: "status", payload: { status: "running" } } as const;
      await client.postEvents(taskId, attempt, [first]);
      await expect(client.postEvents(taskId, attempt, [first])).resolves.toMatchObject({ nextSequence: 2 });
      await expect(client.postEvents(taskId, attempt, [{ ...first, payload: { status: "idle" } }])).rejects.toMatchObject({
        status: 409,
        code: "event_conflict",
      });
      await expect(client.postEvents(taskId, attempt, [{ sequence: 3, type: "status", payload: { status: "idle" } }])).rejects.toMatchObject({
        status: 409,
        code: "sequence_gap",
      });

      const done = { attempt, status: "done", localSessionId: "ses_1" } as const;
      await client.complete(taskId, done);
      await expect(client.complete(taskId, done)).resolves.toMatchObject({ taskId });
      await expect(client.complete(taskId, { ...done, localSessionId: "ses_2" })).rejects.toMatchObject({
        status: 409,
        code: "completion_conflict",
      });
      expect((await harness.inspect(taskId)).events).toHaveLength(1);
    });

    it("answers malformed bodies with a typed 400 and changes nothing", async () => {
      const { client, runnerId } = await newClient();
      const { taskId } = await harness.enqueueCreate({ title: "bad input", prompt: null, runnerId });
      const { attempt } = await client.claim(taskId);
      const url = `${harness.baseUrl}${harness.prefix ?? RUNNER_ROUTE_PREFIX}${RUNNER_PATHS.taskEvents(taskId)}`;
      const authorization = await client.authorization();
      const post = (body: string) => fetch(url, { method: "POST", headers: { authorization, "content-type": "application/json" }, body });
      for (const body of [
        "{not json",
        JSON.stringify({ attempt, events: [{ sequence: 1, type: "nope", payload: {} }] }),
        JSON.stringify({ attempt, events: [{ sequence: 1, type: "status", payload: { status: "running" } }], extra: 1 }),
      ]) {
        const response = await post(body);
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ error: "invalid_request" });
      }
      expect((await harness.inspect(taskId)).events).toHaveLength(0);
    });

    it("refuses a forged token with 401 (credential retired) and a foreign task with 404", async () => {
      const { client } = await newClient();
      const { runnerId: otherRunner } = await newClient();
      const { taskId } = await harness.enqueueCreate({ title: "theirs", prompt: null, runnerId: otherRunner });
      await expect(client.claim(taskId)).rejects.toMatchObject({ status: 404 });
      await expect(client.heartbeat(taskId, 1)).rejects.toMatchObject({ status: 404 });
      const token = (await client.authorization()).slice("Bearer ".length);
      const [payload] = token.split(".");
      const forged = createRunnerClient({
        baseUrl: harness.baseUrl,
        ...(harness.prefix ? { prefix: harness.prefix } : {}),
        token: `${payload}.${"A".repeat(43)}`,
        retry: fastRetry,
      });
      const error = await forged.work().catch((e: unknown) => e);
      expect(RunnerProtocolError.isInstance(error) && error.status === 401 && error.credentialRetired).toBe(true);
    });
  });
}
