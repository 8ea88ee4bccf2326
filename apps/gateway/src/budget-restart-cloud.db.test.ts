import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

// A budgeted cloud turn whose gateway restarts mid-turn, with nobody reading it: the gateway that
// starts follows it again (its follower lived in the process that stopped), so the turn still
// pauses at its budget and its worker's engine stops — on the real opencode, through the witness.
const db = useTestDatabase();
const member = fixedDevMember("budget-restart");
const STEP_TOKENS = 15;
let opencode: RealOpencode;
let witness: RunningWitness;
let sql: postgres.Sql;
let gateway: Awaited<ReturnType<typeof serveGateway>>;

const serve = (port: number) =>
  serveGateway({
    sql,
    port,
    members: () => [member],
    cloudEnabled: () => true,
    cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-restart" }),
    runnerTokenSecret: "budget-restart-runner-secret-0123456789",
  });

beforeAll(async () => {
  opencode = await startRealOpencode();
  witness = await startWitnessWorker({
    clientToken: "client-token-restart",
    hostToken: "host-token-restart",
    gatewayKey: "gateway-key-restart",
    opencode: { url: opencode.url, directory: opencode.directory },
  });
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  gateway = await serve(0);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await sql?.end({ timeout: 5 });
  await witness?.close();
  await opencode?.stop();
});

async function memberClient() {
  const client = new Client({ name: "budget-restart", version: "1.0.0" });
  const headers = { Authorization: `Bearer ${member.mcpToken}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers } }));
  const execute = async (name: string, body: Record<string, unknown>) =>
    (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as { isError?: boolean; structuredContent: Record<string, any> };
  return { client, execute };
}

it("pauses a budgeted cloud turn at its budget after the gateway restarted mid-turn, with nobody reading it", async () => {
  // A model call every ~200 ms: the restart takes a few of them, the budget is crossed well after.
  const prompt = "STEPS 400 PACE 150 across a restart";
  const calls = () => opencode.llmRequests.filter((r) => r.lastUserText === prompt && r.tools.length > 0).length;
  const before = await memberClient();
  // Crossed at the 40th model call, seconds after the restart.
  const created = await before.execute("remote-session:create", { target: "cloud", prompt, budget: { tokens: 40 * STEP_TOKENS - 1 } });
  expect(created.isError).toBeUndefined();
  const sessionId = String(created.structuredContent.sessionId);
  while (calls() < 2) await new Promise((resolve) => setTimeout(resolve, 20));

  const port = Number(new URL(gateway.baseUrl).port);
  await before.client.close();
  await gateway.close();
  const stoppedAt = calls();
  expect(stoppedAt).toBeLessThan(40);
  gateway = await serve(port);

  // No read: only the restarted gateway's follower can see the spend and pause the turn.
  const deadline = Date.now() + 60_000;
  const pauseOf = async () => (await sql<{ budget_pause: unknown }[]>`select budget_pause from remote_session where id = ${sessionId}`)[0]?.budget_pause;
  while (!(await pauseOf())) {
    if (Date.now() > deadline) throw new Error(`no pause after ${calls()} model calls`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The engine stopped there, far short of its 400 calls.
  let settled = calls();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (calls() === settled) break;
    settled = calls();
  }
  expect(settled).toBeGreaterThanOrEqual(40);
  expect(settled).toBeLessThan(60);

  const after = await memberClient();
  const read = await after.execute("remote-session:read", { sessionId });
  expect(read.structuredContent).toMatchObject({ state: "waiting_input", pending: { kind: "budget", scope: "session" } });
  // Each step recorded once, across the restart: never more than the model reported.
  expect(read.structuredContent.pending.spent.tokens).toBeGreaterThanOrEqual(40 * STEP_TOKENS);
  expect(read.structuredContent.pending.spent.tokens).toBeLessThanOrEqual(settled * STEP_TOKENS);
  await after.client.close();
}, 120_000);
