import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startDesktopRunner } from "@openwork/desktop-runner";
import { freePort } from "@openwork/embedded-postgres";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { createAskingEngine } from "./testing/asking-engine.js";
import { spawnGatewayProcess } from "./testing/gateway-process.js";
import { type ReceivedHook, startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

// A gateway PROCESS is SIGKILLed after a session's state change committed and before its
// notification went out (and, second, while the webhook was being sent): after a restart the
// member is told exactly once, by webhook-id, as a deduping receiver counts.
const db = useTestDatabase();
const alice = fixedDevMember("killed_alice");
const cleanups: (() => Promise<unknown> | unknown)[] = [];
let home: string;
let port: number;
let hooks: WebhookReceiver;
let sql: postgres.Sql;
// While set, the receiver holds every request unanswered, so the gateway is killed mid-send.
let holding = false;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "openwork-notify-kill-"));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  await writeFile(
    join(home, "gateway.json"),
    JSON.stringify({ members: [alice], cloudOrganizations: [], runnerTokenSecret: "notify-kill-runner-secret-0123456789" }),
  );
  port = await freePort();
  hooks = await startWebhookReceiver(() => 200, { hold: () => holding });
  cleanups.push(() => hooks.close());
  sql = postgres(db.current.url, { max: 3, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
});

/** One life of the gateway process on the same port and database. */
async function startLife(env: Record<string, string>) {
  const life = spawnGatewayProcess({
    port,
    databaseUrl: db.current.url,
    devConfig: join(home, "gateway.json"),
    env: { NOTIFY_ALLOW_PRIVATE_NETWORKS: "1", ...env },
  });
  cleanups.push(() => life.kill());
  await life.ready();
  return life;
}

async function execute(baseUrl: string, name: string, body: Record<string, unknown>) {
  const client = new Client({ name: "notify-kill", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/agent`), { requestInit: { headers: { Authorization: `Bearer ${alice.mcpToken}` } } }),
  );
  try {
    const result = (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as {
      isError?: boolean;
      structuredContent: Record<string, any>;
    };
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent;
  } finally {
    await client.close();
  }
}

const deliveriesOf = (sessionId: string) =>
  sql<{ status: string; attempts: number }[]>`
    select d.status, d.attempts from notify_delivery d join notify_event e on e.organization_id = d.organization_id and e.id = d.event_id
    where e.session_id = ${sessionId} and e.kind = 'waiting_input'`;
async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const hooksFor = (sessionId: string): ReceivedHook[] => hooks.received.filter((hook) => hook.body.includes(sessionId));
/** Waits until the session asks, through the runner in this process: the state change is the gateway process's commit. */
const askingSession = async (baseUrl: string, title: string) => {
  const { sessionId } = await execute(baseUrl, "remote-session:create", { target: "desktop", title, prompt: "ASK_BASH now" });
  await until(async () => ((await deliveriesOf(sessionId)).length === 1 ? true : undefined), `${title}'s waiting_input in the outbox`);
  return sessionId as string;
};

it("sends a notification exactly once after the gateway process is killed between the state change and the send", async () => {
  // Life 1 looks at its outbox only once an hour, and no session hint wakes it: it commits the
  // state change and its outbox row, and sends nothing.
  let life = await startLife({ NOTIFY_INTERVAL_MS: "3600000", NOTIFY_WAKE_ON_HINTS: "0" });
  const created = await fetch(`${life.url}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json" },
    // With text allowed: only such a channel gets the answer link this test checks.
    body: JSON.stringify({ kind: "webhook", target: hooks.url("/alice"), eventKinds: ["waiting_input"], allowText: true }),
  });
  const { secret } = (await created.json()) as { secret: string };
  const asking = createAskingEngine();
  const runner = await startDesktopRunner({
    gatewayUrl: life.url,
    memberToken: alice.sessionToken,
    runnerId: "notify-kill-desktop",
    name: "Killed",
    engine: asking.engine,
  });
  cleanups.push(() => runner.stop());

  const first = await askingSession(life.url, "killed before sending");
  expect(await deliveriesOf(first)).toEqual([{ status: "pending", attempts: 0 }]);
  await life.kill();
  expect(hooksFor(first)).toEqual([]);

  // Life 2 drains at once; its sends time out after 1 s, so a claim it held lapses 2 s after it was taken.
  life = await startLife({ NOTIFY_SEND_TIMEOUT_MS: "1000", NOTIFY_INTERVAL_MS: "200" });
  await hooks.until(() => hooksFor(first).length === 1);
  await until(async () => ((await deliveriesOf(first))[0]?.status === "sent" ? true : undefined), "the first delivery marked sent");
  const [hook] = hooksFor(first);
  const payload = new Webhook(secret).verify(hook!.body, hook!.headers as Record<string, string>) as { data: { sessionId: string; answerUrl?: string } };
  expect(payload.data).toMatchObject({ sessionId: first, answerUrl: expect.stringContaining(`${life.url}/notify/answer/`) });

  // The desktop runs one turn at a time: the first session's gives way to the next.
  await execute(life.url, "remote-session:stop", { sessionId: first });

  // Killed again, this time while the receiver holds the webhook: sent, never marked.
  holding = true;
  const second = await askingSession(life.url, "killed while sending");
  await hooks.until(() => hooksFor(second).length === 1);
  await life.kill();
  holding = false;
  life = await startLife({ NOTIFY_SEND_TIMEOUT_MS: "1000", NOTIFY_INTERVAL_MS: "200" });
  await until(async () => ((await deliveriesOf(second))[0]?.status === "sent" ? true : undefined), "the second delivery marked sent after its claim lapsed");

  // Long enough for any extra send to show (several drain passes, past a claim's lapse).
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idOf = (sessionId: string) => {
    const ids = new Set(hooksFor(sessionId).map((hook) => String(hook.headers["webhook-id"])));
    expect(ids.size).toBe(1);
    return [...ids][0]!;
  };
  // What a receiver that dedupes by webhook-id sees: each notification once. The first was posted
  // once; the second, whose send the kill cut, again after its claim lapsed, with the same id.
  const counts = hooks.ids();
  expect(counts.get(idOf(first))).toBe(1);
  expect(counts.get(idOf(second))).toBe(2);
  expect(await deliveriesOf(first)).toEqual([{ status: "sent", attempts: 1 }]);
  expect(await deliveriesOf(second)).toEqual([{ status: "sent", attempts: 2 }]);
  await life.kill();
}, 120_000);
