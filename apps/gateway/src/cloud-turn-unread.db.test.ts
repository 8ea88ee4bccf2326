import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// A cloud session nobody reads: its ledger row (and so its member's notifications) follows the
// turn the cloud target started, a real opencode behind the witness worker.
const db = useTestDatabase();
const member = fixedDevMember("cloud_unread");
let opencode: RealOpencode;
let witness: RunningWitness;
let test: Awaited<ReturnType<typeof startTestGateway>>;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  opencode = await startRealOpencode();
  witness = await startWitnessWorker({
    clientToken: "client-token-unread",
    hostToken: "host-token-unread",
    gatewayKey: "gateway-key-unread",
    opencode: { url: opencode.url, directory: opencode.directory },
  });
  test = await startTestGateway(db.current.url, member, {
    cloudEnabled: () => true,
    cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-unread" }),
    notify: { intervalMs: 100, allowPrivateNetworks: true },
  });
}, 90_000);

afterAll(async () => {
  await test?.close();
  await witness?.close();
  await opencode?.stop();
  await hooks?.close();
});

const stateOf = async (sessionId: string) => (await test.sql<{ state: string }[]>`select state from remote_session where id = ${sessionId}`)[0]?.state;
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
  for (const deadline = Date.now() + timeoutMs; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

it("records a cloud turn's end and notifies it, with nobody reading the session", async () => {
  const channel = await fetch(`${test.gateway.baseUrl}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "webhook", target: hooks.url("/unread"), eventKinds: ["turn_idle", "turn_failed", "waiting_input"] }),
  });
  expect(channel.status).toBe(201);
  const created = (await test.execute("remote-session:create", { target: "cloud", title: "Unread", prompt: "hello, nobody reads this" })).structuredContent;
  const sessionId = created.sessionId as string;
  await until(async () => (await stateOf(sessionId)) === "idle", "the row reaching idle");
  await hooks.until((received) => received.some((hook) => JSON.parse(hook.body).type === "session.turn_idle"), 10_000);
  expect(JSON.parse(hooks.received.at(-1)!.body)).toMatchObject({ type: "session.turn_idle", data: { sessionId, state: "idle" } });
}, 90_000);

it("records a cloud turn that fails before any reply as failed, with the engine's reason, with nobody reading the session", async () => {
  const model = { providerId: "nobody", modelId: "nope" };
  const created = (await test.execute("remote-session:create", { target: "cloud", title: "Unread failure", prompt: "hello", model })).structuredContent;
  const sessionId = created.sessionId as string;
  await until(async () => (await stateOf(sessionId)) === "failed", "the row reaching failed");
  const [row] = await test.sql<{ last_error: unknown }[]>`select last_error from remote_session where id = ${sessionId}`;
  expect(row!.last_error).toMatchObject({ error: "model_unavailable" });
  await hooks.until(
    (received) => received.some((hook) => JSON.parse(hook.body).type === "session.turn_failed" && JSON.parse(hook.body).data.sessionId === sessionId),
    10_000,
  );
}, 90_000);

it("records a cloud turn that asks the human as waiting_input, with nobody reading the session", async () => {
  const created = (await test.execute("remote-session:create", { target: "cloud", title: "Unread ask", prompt: "RUNBASH please" })).structuredContent;
  const sessionId = created.sessionId as string;
  await until(async () => (await stateOf(sessionId)) === "waiting_input", "the row reaching waiting_input");
  await hooks.until(
    (received) => received.some((hook) => JSON.parse(hook.body).type === "session.waiting_input" && JSON.parse(hook.body).data.sessionId === sessionId),
    10_000,
  );
  await test.execute("remote-session:stop", { sessionId });
}, 90_000);
