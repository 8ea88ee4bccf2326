// Lease loss and deadlines with the default settings (lease 30 s, heartbeat 10 s, sweep 2 s):
// from a runner's last heartbeat to `interrupted`, and from `deliverBy` to `expired`.
import { memberCall } from "@openwork/gateway";
import { createSessionLedger } from "@openwork/remote-session-core";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";

const SAMPLES = Number(process.env.SAMPLES ?? 3);
const db = await benchDatabase("deadlines");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const ledger = createSessionLedger(fixture.sql);
  const stateAt = async (sessionId: string, state: string) => {
    for (;;) {
      if ((await ledger.find(memberCall(member), sessionId))?.state === state) return performance.now();
      await sleep(50);
    }
  };

  // Lease loss: runners claim and heartbeat once, then go silent (as a killed desktop does).
  const lost = await Promise.all(
    Array.from({ length: SAMPLES }, async (_, i) => {
      const runner = await fixture.runnerClient(`bench-deadline-runner-${i}`);
      const created = await fixture.execute("remote-session:create", { target: "desktop", runner: `bench-deadline-runner-${i}`, prompt: "work" });
      const sessionId = String(created.structuredContent?.sessionId);
      const [item] = (await runner.work()).items;
      const { attempt } = await runner.claim(item!.taskId);
      await runner.heartbeat(item!.taskId, attempt);
      const lastHeartbeat = performance.now();
      return (await stateAt(sessionId, "interrupted")) - lastHeartbeat;
    }),
  );
  rows["last heartbeat → interrupted"] = { ...summarize(lost.map((ms) => ms / 1000)), unit: "s", budget: "≤ 40 s" };

  // Store-and-forward deadlines with no desktop to take them.
  const missed = await Promise.all(
    Array.from({ length: SAMPLES }, async (_, i) => {
      const deliverBy = Date.now() + 2_000 + i * 500;
      const created = await fixture.execute("remote-session:create", { target: "desktop", prompt: "later", deliverBy: new Date(deliverBy).toISOString() });
      const sessionId = String(created.structuredContent?.sessionId);
      const deadline = performance.now() + (deliverBy - Date.now());
      return (await stateAt(sessionId, "expired")) - deadline;
    }),
  );
  rows["deliverBy → expired"] = { ...summarize(missed.map((ms) => ms / 1000)), unit: "s", budget: "≤ 5 s" };
  await fixture.close();
} finally {
  await db.stop();
}
await report("deadlines", db.server, rows, [
  "Defaults: lease 30 s, heartbeat every 10 s, sweep every 2 s; expected interruption ≈ lease + ≤ 1 sweep ≈ 30–32 s.",
  "Baselines for the same event in other job systems, with their defaults: graphile-worker keeps a crashed worker's jobs locked ≥ 4 h; pg-boss detects in heartbeat + up to 60 s; Buildkite reassigns lost agents in ~4 min.",
]);
process.exit(0);
