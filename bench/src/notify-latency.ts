// Notification latency: a desktop turn ends (the runner's completion moves the session to idle)
// → the member's webhook receives `session.turn_idle`, beside a `read` with waitMs waiting for the
// same change (same run, same completion). Three drains: the default (woken by the state change's
// session hint on the wake bus, 1 s interval as backstop), and the interval alone at 1 s and
// at 100 ms (NOTIFY_WAKE_ON_HINTS=0).
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";
import { startReceiver } from "./webhook-receiver.js";

const SAMPLES = Number(process.env.SAMPLES ?? 60);
const db = await benchDatabase("notify_latency");
const rows: Record<string, Record<string, unknown>> = {};

async function measure(label: string, intervalMs: number, wakeOnHints: boolean) {
  const receiver = await startReceiver();
  const fixture = await benchGateway(db.url, { notify: { allowPrivateNetworks: true, intervalMs, wakeOnHints } });
  try {
    const created = await fetch(`${fixture.gateway.baseUrl}/member/notify/channels`, {
      method: "POST",
      headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "webhook", target: receiver.url, eventKinds: ["turn_idle"] }),
    });
    if (created.status !== 201) throw new Error(`channel: ${created.status} ${await created.text()}`);
    const runner = await fixture.runnerClient(`bench-notify-${intervalMs}-${wakeOnHints}`);
    const ok = async (name: string, body: unknown) => {
      const result = await fixture.execute(name, body);
      if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
      return result.structuredContent as Record<string, any>;
    };
    const { sessionId } = await ok("remote-session:create", { target: "desktop", prompt: "start" });
    const complete = (task: { taskId: string; attempt: number }, turn: number) =>
      runner.complete(task.taskId, {
        attempt: task.attempt,
        status: "done",
        localSessionId: `ses_${sessionId}`,
        events: [{ sequence: 1, type: "assistant.final", payload: { messageId: `m${turn}`, text: `reply ${turn}` } }],
      });
    const first = receiver.next();
    await complete((await runner.claimNext())!, 0);
    await first;
    const notified: number[] = [];
    const waited: number[] = [];
    for (let i = 1; i <= SAMPLES; i++) {
      const sent = await ok("remote-session:send", { sessionId, prompt: `follow-up ${i}` });
      const task = (await runner.claimNext())!;
      const reading = ok(sent.next.name, sent.next.body).then(() => performance.now());
      // Let the claim's own wake-up and the read's first look pass before the completion.
      await sleep(60);
      const hook = receiver.next();
      const t0 = performance.now();
      await complete(task, i);
      const [hookAt, readAt] = await Promise.all([hook, reading]);
      notified.push(hookAt - t0);
      waited.push(readAt - t0);
    }
    rows[`turn ends → webhook received (${label})`] = { ...summarize(notified), unit: "ms" };
    rows[`baseline: turn ends → waiting read returns (same run, ${label})`] = { ...summarize(waited), unit: "ms" };
  } finally {
    await fixture.close();
    await receiver.close();
  }
}

try {
  await measure("default: woken by the session hint", 1_000, true);
  await measure("interval alone, 1 000 ms", 1_000, false);
  await measure("interval alone, 100 ms", 100, false);
} finally {
  await db.stop();
}
await report("notify-latency", db.server, rows, [
  `${SAMPLES} follow-ups on one desktop session per interval; the runner (a protocol client in this process) completes each with its reply; from the completion request's start to the end of the webhook POST at a receiver in this process, and to the return of a read with waitMs started before it (baseline), same completion.`,
  "The state change enqueues in its own transaction (the trigger on remote_session); a drain pass sends it. By default the change's session hint on the wake bus wakes the drain (at most once per 25 ms: a send, a claim and a completion close together wake it in turn); with the interval alone a change waits for the next pass. Each sample here starts right after the previous notification, so just after a pass: the interval-alone rows are close to the whole interval (a change at a random moment waits half of it on average).",
]);
process.exit(0);
