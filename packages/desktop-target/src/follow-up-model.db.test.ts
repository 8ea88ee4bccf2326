import { createSessionLedger, type LedgerSession, type MemberScope, type Model } from "@openwork/remote-session-core";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openworkMintRequest } from "./testing/openwork-desktop-bridge.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
const ALLOWED: Model = { providerId: "anthropic", modelId: "claude-allowed" };
const FORBIDDEN: Model = { providerId: "anthropic", modelId: "claude-forbidden" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, {
    dialects: ["desktop-runner", "openwork"],
    timings: { relayWaitMs: 200 },
    mayUseModel: async (_scope, model) => model.modelId !== FORBIDDEN.modelId,
  });
});
afterAll(() => gateway.close());

const member: MemberScope = { organizationId: "org_follow_up_model", memberId: "mem_follow_up_model" };
const find = async (id: string) => (await createSessionLedger(gateway.sql).find(gateway.call(member), id)) as LedgerSession;

/** A session whose first turn a runner ran and completed, with that runner's client. */
async function idleSession() {
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-model-0001") });
  const created = await gateway.sessions.create(gateway.call(member), { title: "models", prompt: "first" });
  const [item] = (await client.work()).items;
  const { attempt } = await client.claim(item!.taskId);
  await client.postEvents(item!.taskId, attempt, [{ sequence: 1, type: "session.bound", payload: { localSessionId: "ses_local_model" } }]);
  await client.complete(item!.taskId, { attempt, status: "done", localSessionId: "ses_local_model" });
  return { client, sessionId: created.sessionId };
}

it("runs a follow-up with the model it names, declared to the capability, and re-checks the member's access to it at claim", async () => {
  expect(gateway.target.sendTakesModel).toBe(true);
  const { client, sessionId } = await idleSession();

  // The capability passes `model` to a target that declares it; the core hands it on.
  const withModel = { prompt: "second", model: { ...ALLOWED, variant: "high" } };
  await gateway.sessions.send(gateway.call(member), await find(sessionId), withModel);
  const [followUp] = (await client.work()).items;
  const assignment = await client.claim(followUp!.taskId);
  expect(assignment).toMatchObject({ kind: "remote_session.send", model: { ...ALLOWED, variant: "high" } });
  await client.complete(assignment.taskId, { attempt: assignment.attempt, status: "done", localSessionId: "ses_local_model" });

  // A model the member may no longer use fails the follow-up at claim instead of running it.
  const forbidden = { prompt: "third", model: FORBIDDEN };
  await gateway.sessions.send(gateway.call(member), await find(sessionId), forbidden);
  const [refused] = (await client.work()).items;
  await expect(client.claim(refused!.taskId)).rejects.toMatchObject({ status: 409 });
  const [row] = await gateway.sql<{ state: string; failure_code: string; prompt: string | null }[]>`
    select state, failure_code, prompt from desktop_task where id = ${refused!.taskId}`;
  expect(row).toEqual({ state: "failed", failure_code: "model_access_lost", prompt: null });
});

it("hands an OpenWork desktop a follow-up's model in its request, and fails one whose model the member lost at claim", async () => {
  const owner: MemberScope = { organizationId: "org_follow_up_model", memberId: "mem_follow_up_openwork" };
  const post = async (path: string, auth: string, body: unknown) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const { token } = (await post("/v1/automation-runners/token", gateway.memberToken(owner), openworkMintRequest("openwork-model-01"))).body as {
    token: string;
  };
  const work = async () =>
    (
      (await (await fetch(`${gateway.baseUrl}/v1/automation-runner/work`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        items: { commandId?: string; requestId?: string }[];
      }
    ).items;
  const created = await gateway.sessions.create(gateway.call(owner), { title: "openwork models", prompt: "first" });
  const [command] = await work();
  await post(`/v1/remote-session-commands/${command!.commandId}/claim`, token, {});
  await post(`/v1/remote-session-commands/${command!.commandId}/complete`, token, { status: "delivered", sessionId: "ses_ow_model", workspaceId: "ws_m" });
  const session = async () => (await createSessionLedger(gateway.sql).find(gateway.call(owner), created.sessionId)) as LedgerSession;

  const allowed = { prompt: "second", model: ALLOWED };
  await gateway.sessions.send(gateway.call(owner), await session(), allowed);
  const [request] = await work();
  const claimed = await post(`/v1/remote-session-requests/${request!.requestId}/claim`, token, {});
  expect(claimed.body.assignment).toMatchObject({ action: "send", input: { prompt: "second", model: { ...ALLOWED, variant: null } } });
  await post(`/v1/remote-session-requests/${request!.requestId}/complete`, token, {
    status: "done",
    outcome: { action: "send", result: { messageId: null, alreadyPresent: false } },
  });

  const forbidden = { prompt: "third", model: FORBIDDEN };
  await gateway.sessions.send(gateway.call(owner), await session(), forbidden);
  const [refused] = await work();
  expect(await post(`/v1/remote-session-requests/${refused!.requestId}/claim`, token, {})).toEqual({ status: 409, body: { error: "request_claim_conflict" } });
  const [row] = await gateway.sql<
    { state: string; failure_code: string; prompt: string | null }[]
  >`select state, failure_code, prompt from desktop_task where id = ${refused!.requestId!}`;
  expect(row).toEqual({ state: "failed", failure_code: "model_access_lost", prompt: null });
});
