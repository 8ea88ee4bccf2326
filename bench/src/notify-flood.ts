// One member's webhooks that never answer, and another member's notifications: the other
// member's webhook latency (enqueue → received) with no flood, then while FLOOD deliveries of the
// first member wait on a receiver that takes each request and never answers (each send lasts the
// 10 s send timeout), on one drainer with its default lanes and timeout. Budget: the other
// member's latency during the flood within 2× its latency without it.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { migrate } from "@openwork/remote-session-core";
import { createNotifyChannels, enqueueNotification, startNotificationDrain, webhookNotifier } from "@openwork/session-notify";
import postgres from "postgres";
import { benchDatabase, report, sleep, summarize } from "./harness.js";
import { startReceiver } from "./webhook-receiver.js";

const SAMPLES = Number(process.env.SAMPLES ?? 20);
const FLOOD = Number(process.env.FLOOD ?? 80);
// A sample during the flood is given up after this long (the drain before lanes took 49.7 s).
const GIVE_UP_MS = Number(process.env.GIVE_UP_MS ?? 90_000);
const SECRET = `whsec_${Buffer.from("a bench secret of thirty-two byte").toString("base64")}`;

const db = await benchDatabase("notify_flood");
const sql = postgres(db.url, { max: 10, onnotice: () => {} });
const rows: Record<string, Record<string, unknown>> = {};
try {
  // The bystander's receiver answers at once; the flooder's takes requests and never answers.
  const fast = await startReceiver();
  const silent = createServer(() => {});
  silent.listen(0, "127.0.0.1");
  await once(silent, "listening");

  await migrate(sql);
  const drain = await startNotificationDrain({ sql, notifiers: [webhookNotifier({ allowPrivateNetworks: true })] });
  const channels = createNotifyChannels(sql, { allowPrivateNetworks: true });
  const memberWith = async (name: string, target: string) => {
    const owner = { organizationId: `org_${name}`, memberId: `member_${name}` };
    await channels.create(owner.organizationId, { memberId: owner.memberId, kind: "webhook", target, secret: SECRET, eventKinds: ["turn_idle"] });
    return owner;
  };
  const bystander = await memberWith("bystander", fast.url);
  const flooder = await memberWith("flooder", `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`);
  let events = 0;
  const event = (owner: { organizationId: string; memberId: string }) => ({
    id: `evt_${++events}`,
    kind: "turn_idle" as const,
    ...owner,
    sessionId: "rs_bench",
    title: "Bench",
    state: "idle",
    occurredAt: new Date(),
  });
  /** The bystander's latency, enqueue → received (ms), or GIVE_UP_MS when it did not come. */
  const sample = async () => {
    const received = fast.next();
    const t0 = performance.now();
    await enqueueNotification(sql, event(bystander));
    drain.wake();
    const at = await Promise.race([received, sleep(GIVE_UP_MS).then(() => Number.NaN)]);
    return Number.isNaN(at) ? GIVE_UP_MS : at - t0;
  };
  const samples = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      times.push(await sample());
      await sleep(50);
    }
    return summarize(times);
  };

  rows["no flood (baseline)"] = { ...(await samples(SAMPLES)), unit: "ms" };
  await sql.begin(async (tx) => {
    for (let i = 0; i < FLOOD; i++) await enqueueNotification(tx, event(flooder));
  });
  drain.wake();
  await sleep(200);
  rows[`${FLOOD} deliveries of another member to a receiver that never answers`] = { ...(await samples(SAMPLES)), unit: "ms" };
  await drain.close().catch(() => {});
  silent.closeAllConnections();
  silent.close();
  await fast.close();
} finally {
  await sql.end({ timeout: 5 });
  await db.stop();
}
await report("notify-flood", db.server, rows, [
  `The other member's webhook latency, enqueue → received, one at a time (${SAMPLES} samples each), beside the same with no flood, one drainer with its defaults (10 s send timeout).`,
  `A sample that did not arrive within ${GIVE_UP_MS} ms counts as ${GIVE_UP_MS}. Budget: within 2× the baseline during the flood.`,
]);
process.exit(0);
