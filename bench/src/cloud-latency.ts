// Cloud latency against a real opencode behind the witness worker: prompt → first reply readable,
// through the cloud target reading the worker's event stream, beside a client talking to the
// worker directly (its own event stream) and beside the target when it can only poll (the
// behaviour before event-driven reads), interleaved in the same run. The read's wake-up latency
// is the time from the worker reporting the turn idle (seen by the direct listener) to the
// read returning.
import { createCloudTarget, createHttpWorkerResolver, createWorkerEvents } from "@openwork/cloud-target";
import { startRealOpencode } from "@openwork/real-opencode";
import { createSessionLedger, type LedgerSession, migrate, newReferenceId } from "@openwork/remote-session-core";
import { targetSessions } from "@openwork/remote-session-core/testing";
import { followSse } from "@openwork/remote-session-core/wire";
import { startWitnessWorker } from "@openwork/witness-worker";
import postgres from "postgres";
import { benchDatabase, report, summarize } from "./harness.js";

const SAMPLES = Number(process.env.SAMPLES ?? 30);
const member = { organizationId: "org_bench", userId: "user_bench", memberId: "mem_bench" };
const auth = { authorization: "Bearer bench-client-token", "content-type": "application/json" };

const db = await benchDatabase("cloud_latency");
const opencode = await startRealOpencode();
const witness = await startWitnessWorker({
  clientToken: "bench-client-token",
  hostToken: "bench-host-token",
  gatewayKey: "bench-gateway-key",
  opencode: { url: opencode.url, directory: opencode.directory },
});
const sql = postgres(db.url, { max: 10, onnotice: () => {} });
const rows: Record<string, Record<string, unknown>> = {};
try {
  await migrate(sql);
  const ledger = createSessionLedger(sql);
  const resolver = createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "bench-gateway-key" });
  const target = (events: ReturnType<typeof createWorkerEvents>) =>
    targetSessions(createCloudTarget({ resolver, isCloudEnabled: async () => true, events }), ledger);
  const eventDriven = target(createWorkerEvents());
  const polling = target(createWorkerEvents({ maxStreams: 0 }));
  const mount = `${witness.url}/workspace/${witness.workspaceId}/opencode`;

  // The direct client's own event stream: when each session went idle.
  const idleAt = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const stream = new AbortController();
  const events = await fetch(`${mount}/event`, { headers: auth, signal: stream.signal });
  void followSse({
    open: async () => events.body ?? Promise.reject(new Error("no event stream")),
    onMessage: (message) => {
      const event = JSON.parse(message.data) as { type: string; properties: { sessionID?: string } };
      if (event.type !== "session.idle" || !event.properties.sessionID) return;
      idleAt.set(event.properties.sessionID, performance.now());
      waiters.get(event.properties.sessionID)?.();
    },
    silenceMs: 60_000,
    signal: stream.signal,
  }).catch(() => {});

  const direct = async (text: string) => {
    const t0 = performance.now();
    const session = (await (await fetch(`${mount}/session`, { method: "POST", headers: auth, body: JSON.stringify({ title: "bench" }) })).json()) as {
      id: string;
    };
    const idle = new Promise<void>((resolve) => waiters.set(session.id, resolve));
    await fetch(`${mount}/session/${session.id}/prompt_async`, { method: "POST", headers: auth, body: JSON.stringify({ parts: [{ type: "text", text }] }) });
    await idle;
    const messages = (await (await fetch(`${mount}/session/${session.id}/message`, { headers: auth })).json()) as unknown[];
    if (messages.length < 2) throw new Error("direct: no reply");
    return performance.now() - t0;
  };
  const viaTarget = async (sessions: typeof eventDriven, text: string) => {
    const call = () => ({ ...member, referenceId: newReferenceId() });
    const t0 = performance.now();
    const created = await sessions.create(call(), { title: "bench", prompt: text });
    for (;;) {
      const read = await sessions.read(call(), (await ledger.find(member, created.sessionId)) as LedgerSession, { limit: 20, waitMs: 10_000 });
      if (read.finalAssistantText) {
        const done = performance.now();
        const remoteId = (await ledger.find(member, created.sessionId))!.targetSessionId!;
        return { total: done - t0, wake: done - (idleAt.get(remoteId) ?? done) };
      }
      if (read.state !== "running") throw new Error(`target: ${read.state}`);
    }
  };

  await direct("warm up");
  await viaTarget(eventDriven, "warm up");
  const samples = { direct: [] as number[], events: [] as number[], eventsWake: [] as number[], polling: [] as number[], pollingWake: [] as number[] };
  for (let i = 0; i < SAMPLES; i++) {
    samples.direct.push(await direct(`direct ${i}`));
    const viaEvents = await viaTarget(eventDriven, `events ${i}`);
    samples.events.push(viaEvents.total);
    samples.eventsWake.push(viaEvents.wake);
    const viaPolling = await viaTarget(polling, `polling ${i}`);
    samples.polling.push(viaPolling.total);
    samples.pollingWake.push(viaPolling.wake);
  }
  stream.abort();
  rows["direct to the worker: create + prompt → idle event → messages (baseline)"] = { ...summarize(samples.direct), unit: "ms" };
  rows["cloud target, event-driven: create → first reply readable"] = { ...summarize(samples.events), unit: "ms" };
  rows["cloud target, polling only (before): create → first reply readable"] = { ...summarize(samples.polling), unit: "ms" };
  rows["read wake-up after the worker went idle, event-driven"] = { ...summarize(samples.eventsWake), unit: "ms" };
  rows["read wake-up after the worker went idle, polling (before)"] = { ...summarize(samples.pollingWake), unit: "ms" };
} finally {
  await sql.end({ timeout: 5 });
  await witness.close();
  await opencode.stop();
  await db.stop();
}
await report("cloud-latency", db.server, rows, [
  `opencode 1.18.33 (fake model) behind the witness worker on 127.0.0.1; ${SAMPLES} turns each, interleaved; ledger on the bench database.`,
  "Budget: event-driven p50 ≤ direct p50 + 50 ms.",
]);
process.exit(0);
