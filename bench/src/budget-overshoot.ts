// How far a turn runs past its budget on the real opencode, on both targets: the cloud (the
// witness worker over one real opencode) and a desktop (the reference runner over another). Each
// turn is an agent working step after step (`STEPS 30`: thirty model calls, each reporting its
// usage, a tool between them); its budget is crossed by the fifth step's usage. From the fake
// model's own log: the steps the model was asked for past the crossing one, the tokens they
// reported, and how long the engine kept calling it. And the time from the crossing step to the
// return of a read that waits on the session (it returns waiting_input with the budget request).
// Baseline, same run: the same turn without a budget on the same target — how long one step
// takes there (an overshoot of one step costs that), and the time from its last step to the
// return of the read that waits for the turn's end (a reader's wait for an ordinary change).
import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { createOpencodeEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { startWitnessWorker } from "@openwork/witness-worker";
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 10);
const STEPS = 30;
// The fake model reports 10 tokens in and 5 out for every call.
const STEP_TOKENS = 15;
const CROSSING = 5;
const BUDGET_TOKENS = (CROSSING - 1) * STEP_TOKENS + 1;

const db = await benchDatabase("budget_overshoot");
const [cloudEngine, desktopEngine] = await Promise.all([startRealOpencode(), startRealOpencode()]);
const witness = await startWitnessWorker({
  clientToken: "bench-client-token",
  hostToken: "bench-host-token",
  gatewayKey: "bench-gateway-key",
  opencode: { url: cloudEngine.url, directory: cloudEngine.directory },
});
const fixture = await benchGateway(db.url, {
  cloudEnabled: () => true,
  cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "bench-gateway-key" }),
});
const runner = await startDesktopRunner({
  gatewayUrl: fixture.gateway.baseUrl,
  memberToken: member.sessionToken,
  runnerId: "bench-overshoot-desktop",
  name: "Overshoot desktop",
  engine: createOpencodeEngine({ url: desktopEngine.url, directory: desktopEngine.directory }),
});
while (fixture.gateway.hub.stats().runnerStreams < 1) await new Promise((resolve) => setTimeout(resolve, 50));

const ok = async (name: string, body: unknown) => {
  const result = await fixture.execute(name, body);
  if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
  return result.structuredContent as Record<string, any>;
};

/** The model calls of the turn prompted with `prompt` (opencode's title request has no tools), as they arrived. */
const stepsOf = (engine: RealOpencode, prompt: string) => engine.llmRequests.filter((r) => r.lastUserText === prompt && r.tools.length > 0).map((r) => r.at);

async function until<T>(look: () => T | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** One turn on `target`: a read waits from before the crossing step; what the model was asked for past it, once the turn settles. */
async function sample(target: "cloud" | "desktop", engine: RealOpencode, budget: boolean, n: number) {
  const prompt = `STEPS ${STEPS} ${target} ${budget ? "budgeted" : "free"} ${n}`;
  const { sessionId } = await ok("remote-session:create", { target, prompt, ...(budget ? { budget: { tokens: BUDGET_TOKENS } } : {}) });
  // The waiting read starts from where the session stands just after the create, before the crossing step.
  const first = await ok("remote-session:read", { sessionId, waitMs: 0, from: "end" });
  const reading = ok("remote-session:read", { sessionId, cursor: first.cursor, waitMs: 25_000 }).then(async function settle(read): Promise<{
    read: Record<string, any>;
    at: number;
  }> {
    const done = budget ? read.pending?.kind === "budget" : read.state === "idle";
    if (done) return { read, at: Date.now() };
    return ok("remote-session:read", { sessionId, cursor: read.cursor, waitMs: 25_000 }).then(settle);
  });
  const crossedAt = await until(() => stepsOf(engine, prompt)[CROSSING - 1], 60_000);
  const { read, at: readAt } = await reading;
  // Let a stopped turn settle: no more model calls for a second.
  let calls = stepsOf(engine, prompt).length;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = stepsOf(engine, prompt).length;
    if (now === calls) break;
    calls = now;
  }
  const steps = stepsOf(engine, prompt);
  const past = steps.slice(CROSSING);
  if (budget && read.state !== "waiting_input") throw new Error(`the waiting read returned ${read.state}`);
  if (budget) await ok("remote-session:stop", { sessionId });
  return {
    // The baseline's change is the turn's end, its last model call (answered at once).
    read: readAt - (budget ? crossedAt : steps.at(-1)!),
    stepsPast: past.length,
    msPast: past.length > 0 ? past.at(-1)! - crossedAt : 0,
    stepMs: (steps.at(-1)! - steps[0]!) / Math.max(1, steps.length - 1),
    spent: Number(read.pending?.spent?.tokens ?? 0),
  };
}

const rows: Record<string, Record<string, unknown>> = {};
try {
  for (const [target, engine] of [
    ["cloud", cloudEngine],
    ["desktop", desktopEngine],
  ] as const) {
    const paused = [];
    const free = [];
    for (let i = 0; i < SAMPLES; i++) {
      paused.push(await sample(target, engine, true, i));
      free.push(await sample(target, engine, false, i));
    }
    rows[`${target}: model steps past the crossing step`] = { ...summarize(paused.map((s) => s.stepsPast)), unit: "steps" };
    rows[`${target}: tokens reported past the crossing step`] = { ...summarize(paused.map((s) => s.stepsPast * STEP_TOKENS)), unit: "tokens" };
    rows[`${target}: engine time past the crossing step (its last model call)`] = { ...summarize(paused.map((s) => s.msPast)), unit: "ms" };
    rows[`${target}: crossing step → waiting read returns waiting_input (budget)`] = { ...summarize(paused.map((s) => s.read)), unit: "ms" };
    rows[`${target}: spent when paused (budget ${BUDGET_TOKENS})`] = { ...summarize(paused.map((s) => s.spent)), unit: "tokens" };
    rows[`${target} baseline: one step of the same turn, no budget`] = { ...summarize(free.map((s) => s.stepMs)), unit: "ms" };
    rows[`${target} baseline: its last step → waiting read returns the turn's end`] = { ...summarize(free.map((s) => s.read)), unit: "ms" };
  }
} finally {
  await runner.stop();
  await fixture.close();
  await witness.close();
  await Promise.all([cloudEngine.stop(), desktopEngine.stop()]);
  await db.stop();
}
await report("budget-overshoot", db.server, rows, [
  `${SAMPLES} turns of each kind per target, each of ${STEPS} model calls on the real opencode's fake model (${STEP_TOKENS} tokens a call, a todo-list tool between calls), the budget (${BUDGET_TOKENS} tokens) crossed by the ${CROSSING}th call's usage.`,
  "Cloud: the cloud target's follower checks the budget after each step the worker reports finished and aborts the worker's session. Desktop: the runner posts each step's usage; the post that crosses opens the pause and its answer carries cancelRequested, and the runner aborts its opencode.",
]);
process.exit(0);
