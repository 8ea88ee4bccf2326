import type { CompleteRequest, TaskEvent } from "@openwork/runner-protocol/internal";
import { createRunnerClient, RunnerProtocolError, type RunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sweepTasks } from "./store/sweep-tasks.js";
import { TASK_TRANSITIONS, type TaskState } from "./task-state.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
let runners: RunnerClient[];
const member = { organizationId: "org_interleave", memberId: "mem_interleave" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
  runners = await Promise.all(
    ["runner-interleave-a", "runner-interleave-b"].map(async (id) =>
      createRunnerClient({
        baseUrl: gateway.baseUrl,
        token: await gateway.registerRunner(member, id),
        retry: { limit: 0, backoff: { baseMs: 1, maxMs: 1, random: () => 0 } },
      }),
    ),
  );
});
afterAll(async () => {
  await gateway.close();
});

type Step =
  | { kind: "claim"; runner: number }
  | { kind: "heartbeat"; runner: number; attempt: number }
  | { kind: "event"; runner: number; attempt: number; sequence: number; variant: number }
  | { kind: "complete"; runner: number; attempt: number; variant: number }
  | { kind: "loseLease" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("claim" as const), runner: fc.nat(1) }),
  fc.record({ kind: fc.constant("heartbeat" as const), runner: fc.nat(1), attempt: fc.integer({ min: 1, max: 2 }) }),
  fc.record({
    kind: fc.constant("event" as const),
    runner: fc.nat(1),
    attempt: fc.integer({ min: 1, max: 2 }),
    sequence: fc.integer({ min: 1, max: 4 }),
    variant: fc.nat(1),
  }),
  fc.record({ kind: fc.constant("complete" as const), runner: fc.nat(1), attempt: fc.integer({ min: 1, max: 2 }), variant: fc.nat(1) }),
  fc.constant({ kind: "loseLease" as const }),
);

const eventOf = (sequence: number, variant: number): TaskEvent => ({
  sequence,
  type: "status",
  payload: { status: variant === 0 ? "running" : "waiting_input" },
});
const completionOf = (attempt: number, variant: number): CompleteRequest =>
  variant === 0 ? { attempt, status: "done", localSessionId: "ses_1" } : { attempt, status: "failed", error: { code: "execution_failed", message: "boom" } };

async function snapshot(taskId: string) {
  const [task] = await gateway.sql<
    { state: TaskState; completion: CompleteRequest | null; attempt: number }[]
  >`select state, completion, attempt from desktop_task where id = ${taskId}`;
  const events = await gateway.sql<
    { attempt: number; sequence: number }[]
  >`select attempt, sequence from desktop_task_event where task_id = ${taskId} order by attempt, sequence`;
  return { ...task!, events };
}

it("keeps a task's state machine intact under random, duplicated and reordered protocol messages", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
      const created = await gateway.sessions.create(gateway.call(member), {
        title: "interleave",
        prompt: "p",
        deliverBy: new Date(Date.now() + 600_000).toISOString(),
      });
      const [row] = await gateway.sql<{ id: string }[]>`select id from desktop_task where session_id = ${created.sessionId}`;
      const taskId = row!.id;
      let before = await snapshot(taskId);
      for (const s of steps) {
        const runner = s.kind === "loseLease" ? undefined : runners[s.runner]!;
        try {
          if (s.kind === "claim") await runner!.claim(taskId);
          else if (s.kind === "heartbeat") await runner!.heartbeat(taskId, s.attempt);
          else if (s.kind === "event") await runner!.postEvents(taskId, s.attempt, [eventOf(s.sequence, s.variant)]);
          else if (s.kind === "complete") await runner!.complete(taskId, completionOf(s.attempt, s.variant));
          else {
            await gateway.sql`update desktop_task set lease_expires_at = now() - interval '1 second' where id = ${taskId} and state = 'claimed'`;
            await sweepTasks(gateway.store);
          }
        } catch (error) {
          // Refusals are typed 4xx, never a server error.
          expect(RunnerProtocolError.isInstance(error)).toBe(true);
          const status = (error as RunnerProtocolError).status ?? 0;
          expect(status >= 400 && status < 500, `${s.kind}: ${String(error)}`).toBe(true);
        }
        const after = await snapshot(taskId);
        // The state moved only along the transition table.
        if (after.state !== before.state) expect(TASK_TRANSITIONS[before.state] as readonly string[]).toContain(after.state);
        // A completion, once there, never changes.
        if (before.completion) expect(after.completion).toEqual(before.completion);
        // Events are gap-free from 1 within each attempt, and only for an attempt that existed.
        for (const attempt of new Set(after.events.map((e) => e.attempt))) {
          const sequences = after.events.filter((e) => e.attempt === attempt).map((e) => e.sequence);
          expect(sequences).toEqual(sequences.map((_, i) => i + 1));
          expect(attempt).toBeLessThanOrEqual(after.attempt);
        }
        before = after;
      }
    }),
    { numRuns: 60 },
  );
}, 120_000);
