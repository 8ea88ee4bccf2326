// Budget pauses on a desktop session: a runner (a protocol client in this process) posts one
// engine step every STEP_MS, each reporting STEP_TOKENS of usage, and heartbeats at the interval
// its assignment names, as the reference runner does; the session's budget is crossed at a known
// step. Measured from the start of the post carrying that step: (a) the return of a read with
// waitMs started before it (it returns `waiting_input` with the budget request), (b) the
// `budget_reached` webhook at a receiver in this process, (c) the answer that tells the runner
// to stop — the answer to a post, or a heartbeat — and the tokens it reported past the budget
// meanwhile (the overshoot). Baseline, same
// run: the same session shape with no budget, whose step asks a permission instead
// (`input.requested`): (d) the waiting read's return, (e) the `waiting_input` webhook.
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";
import { startReceiver } from "./webhook-receiver.js";

const SAMPLES = Number(process.env.SAMPLES ?? 20);
const STEP_MS = Number(process.env.STEP_MS ?? 50);
const STEP_TOKENS = 100;
// The budget is crossed at the fifth step.
const BUDGET_TOKENS = 4 * STEP_TOKENS + 1;
const db = await benchDatabase("budget_pause");
const receiver = await startReceiver();
const fixture = await benchGateway(db.url, { notify: { allowPrivateNetworks: true, intervalMs: 1_000, wakeOnHints: true } });
const runner = await fixture.runnerClient("bench-budget-desktop");
const ok = async (name: string, body: unknown) => {
  const result = await fixture.execute(name, body);
  if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
  return result.structuredContent as Record<string, any>;
};
const usage = (sequence: number): TaskEvent => ({ sequence, type: "usage", payload: { inputTokens: STEP_TOKENS / 2, outputTokens: STEP_TOKENS / 2 } });
const asked = (sequence: number): TaskEvent => ({
  sequence,
  type: "input.requested",
  payload: { requestId: `per_bench_${sequence}`, kind: "permission", title: "bash", detail: "ls" },
});

const channel = await fetch(`${fixture.gateway.baseUrl}/member/notify/channels`, {
  method: "POST",
  headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
  body: JSON.stringify({ kind: "webhook", target: receiver.url, eventKinds: ["budget_reached", "waiting_input"] }),
});
if (channel.status !== 201) throw new Error(`channel: ${channel.status} ${await channel.text()}`);

/** One turn: steps until `crossing` is posted (its post's start is t0), then on until a heartbeat says stop or `after` steps. */
async function sample(budget: boolean) {
  const { sessionId, next } = await ok("remote-session:create", {
    target: "desktop",
    prompt: "bench",
    ...(budget ? { budget: { tokens: BUDGET_TOKENS } } : {}),
  });
  const task = (await runner.claimNext())!;
  let sequence = 1;
  await runner.postEvents(task.taskId, task.attempt, [{ sequence: sequence++, type: "status", payload: { status: "running" } }]);
  const crossing = 5;
  for (let step = 1; step < crossing; step++) {
    await runner.postEvents(task.taskId, task.attempt, [usage(sequence++)]);
    await sleep(STEP_MS);
  }
  // A read that waits from just before the change, and the receiver's next POST.
  const first = await ok("remote-session:read", { sessionId, from: "end" });
  const reading = ok(next.name, { sessionId, cursor: first.cursor, waitMs: 20_000 }).then((read) => ({ read, at: performance.now() }));
  await sleep(60);
  const hook = receiver.next();
  const t0 = performance.now();
  const crossed = await runner.postEvents(task.taskId, task.attempt, [budget ? usage(sequence++) : asked(sequence++)]);
  let stoppedAt: number | null = crossed.cancelRequested ? performance.now() : null;
  let overshoot = 0;
  if (budget) {
    // On as an engine would: a step every STEP_MS, a heartbeat at the assignment's interval,
    // until a post's answer or a heartbeat says stop; then it completes, cancelled.
    let beatAt = performance.now();
    while (stoppedAt === null && performance.now() - t0 < 30_000) {
      await sleep(STEP_MS);
      if (performance.now() - beatAt >= task.heartbeatIntervalMs) {
        beatAt = performance.now();
        if ((await runner.heartbeat(task.taskId, task.attempt)).cancelRequested) stoppedAt = performance.now();
      }
      if (stoppedAt !== null) break;
      overshoot += STEP_TOKENS;
      if ((await runner.postEvents(task.taskId, task.attempt, [usage(sequence++)])).cancelRequested) stoppedAt = performance.now();
    }
    await runner.complete(task.taskId, { attempt: task.attempt, status: "cancelled", localSessionId: `ses_${sessionId}` });
  }
  const [hookAt, { read, at: readAt }] = await Promise.all([hook, reading]);
  if (read.state !== "waiting_input") throw new Error(`the waiting read returned ${read.state}`);
  if (!budget) await runner.complete(task.taskId, { attempt: task.attempt, status: "done", localSessionId: `ses_${sessionId}` });
  return { read: readAt - t0, hook: hookAt - t0, stopped: stoppedAt === null ? null : stoppedAt - t0, overshoot };
}

const rows: Record<string, Record<string, unknown>> = {};
try {
  const paused = [];
  const asking = [];
  for (let i = 0; i < SAMPLES; i++) {
    paused.push(await sample(true));
    asking.push(await sample(false));
  }
  rows["(a) budget crossed → waiting read returns waiting_input (budget)"] = { ...summarize(paused.map((s) => s.read)), unit: "ms" };
  rows["(b) budget crossed → budget_reached webhook received"] = { ...summarize(paused.map((s) => s.hook)), unit: "ms" };
  rows["(c) budget crossed → the runner is told to stop (a post's answer or a heartbeat)"] = {
    ...summarize(paused.map((s) => s.stopped ?? Number.NaN)),
    unit: "ms",
  };
  rows["overshoot: tokens reported past the crossing step"] = { ...summarize(paused.map((s) => s.overshoot)), unit: "tokens" };
  rows["(d) baseline: a permission asked → waiting read returns waiting_input"] = { ...summarize(asking.map((s) => s.read)), unit: "ms" };
  rows["(e) baseline: a permission asked → waiting_input webhook received"] = { ...summarize(asking.map((s) => s.hook)), unit: "ms" };
} finally {
  await fixture.close();
  await receiver.close();
  await db.stop();
}
await report("budget-pause", db.server, rows, [
  `${SAMPLES} turns of each kind on one desktop runner (a protocol client in this process): a step every ${STEP_MS} ms reporting ${STEP_TOKENS} tokens, the budget (${BUDGET_TOKENS} tokens) crossed at the fifth; heartbeats at the assignment's interval, as the reference runner sends them.`,
  "The pause is opened in the transaction that stores the crossing step's usage, with the running task's cancel request, and that post's answer carries cancelRequested: a runner stops before its next step (an older runner hears of it at its next heartbeat). The waiting read returns once the runner's cancelled completion moves the session, or within the 1 s a budgeted session's read waits on its target at a time.",
]);
process.exit(0);
