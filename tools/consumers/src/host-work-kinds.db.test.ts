import { fixedDevMember } from "@openwork/gateway";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAutomationRuns } from "../fixtures/den-api/src/automations.js";
import { startKindGateway, until } from "./kind-gateway.js";

// The runner channel's side of a host's own work kind (den-api's Automations), from outside the packages: every bad
// input a typed refusal that changes nothing, another member's task looking like no task, a
// claim naming a kind nobody serves finding nothing, and a runner of an older gateway never
// naming the host's kinds.
const db = useTestDatabase();
const alice = fixedDevMember("kinds-alice", ["mcp:write"]);
const bob = fixedDevMember("kinds-bob", ["mcp:write"]);
const cleanups: (() => unknown)[] = [];
let env: Awaited<ReturnType<typeof startKindGateway>>;

beforeAll(async () => {
  env = await startKindGateway(db.current.url, [alice, bob], cleanups);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const mint = (member: typeof alice, runnerId: string, protocolVersion?: number) => env.mint(member, runnerId, protocolVersion);

/** A raw runner request: the status and the JSON body. */
async function post(token: string, path: string, body: unknown) {
  const response = await fetch(`${env.gateway.baseUrl}/v1/desktop-runner${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const runOf = async (id: string) => (await env.sql`select status, attempt_count, lease_owner, completion from automation_run where id = ${id}`)[0];

describe("a host's work kind on the runner channel", () => {
  it("refuses bad bodies, another member's runner and unknown task ids with typed errors that change nothing", async () => {
    const runId = await env.scheduleRun("weekly digest");
    const { token } = await mint(alice, "runner-alice-raw");
    const claimed = await post(token, "/tasks/claim-next", { kinds: ["automation.run"] });
    expect(claimed).toMatchObject({
      status: 200,
      body: { assignment: { taskId: runId, kind: "automation.run", attempt: 1, input: { instructions: "weekly digest" } } },
    });
    const before = await runOf(runId);

    expect(await post(token, `/tasks/${runId}/heartbeat`, { attempt: 0 })).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    const badEvent = { attempt: 1, events: [{ sequence: 1, type: "assistant.delta", payload: { text: "no message id" } }] };
    expect(await post(token, `/tasks/${runId}/events`, badEvent)).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    // A remote-session completion is not this kind's.
    expect(await post(token, `/tasks/${runId}/complete`, { attempt: 1, status: "done", localSessionId: "ses_1" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request" },
    });
    expect(await post(token, "/tasks/claim-next", { kinds: ["Automation Run"] })).toMatchObject({ status: 400, body: { error: "invalid_request" } });

    // Bob's runner: Alice's run is no task of his; a prefix nobody registered and a malformed id are none either.
    const bobs = await mint(bob, "runner-bob-raw");
    expect(await post(bobs.token, `/tasks/${runId}/heartbeat`, { attempt: 1 })).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await post(bobs.token, `/tasks/${runId}/complete`, { attempt: 1, status: "done" })).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await post(token, "/tasks/zzz_0123456789/heartbeat", { attempt: 1 })).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await post(token, "/tasks/no-prefix/heartbeat", { attempt: 1 })).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await runOf(runId)).toEqual(before);

    // The holder's own posts go through; a replayed completion is answered the same, a different one refused.
    expect(await post(token, `/tasks/${runId}/heartbeat`, { attempt: 1 })).toMatchObject({ status: 200, body: { leaseValid: true, cancelRequested: false } });
    const done = { attempt: 1, status: "done", result: { summary: "ok" } };
    expect(await post(token, `/tasks/${runId}/complete`, done)).toMatchObject({ status: 200, body: { taskId: runId, state: "succeeded" } });
    expect(await post(token, `/tasks/${runId}/complete`, done)).toMatchObject({ status: 200, body: { state: "succeeded" } });
    expect(await post(token, `/tasks/${runId}/complete`, { attempt: 1, status: "cancelled" })).toMatchObject({
      status: 409,
      body: { error: "completion_conflict" },
    });
    expect(await post(token, `/tasks/${runId}/heartbeat`, { attempt: 1 })).toMatchObject({ status: 200, body: { leaseValid: false } });
  });

  it("hands a member's runs to that member's runners only, and a kind nobody serves finds nothing", async () => {
    const runId = await env.scheduleRun("for alice only");
    const bobs = await mint(bob, "runner-bob-eligibility");
    expect(await post(bobs.token, "/tasks/claim-next", { kinds: ["automation.run", "reports.build"] })).toMatchObject({
      status: 200,
      body: { assignment: null, more: false },
    });
    const { token } = await mint(alice, "runner-alice-eligibility");
    expect(await post(token, "/tasks/claim-next", { kinds: ["reports.build"] })).toMatchObject({ status: 200, body: { assignment: null } });
    // Naming no kind claims the remote-session kinds only: the run stays for a runner that names it.
    expect(await post(token, "/tasks/claim-next", {})).toMatchObject({ status: 200, body: { assignment: null } });
    expect(await runOf(runId)).toMatchObject({ status: "queued", attempt_count: 0 });
    expect(await post(token, "/tasks/claim-next", { kinds: ["automation.run"] })).toMatchObject({ status: 200, body: { assignment: { taskId: runId } } });
  });

  it("a runner whose gateway answered protocol 3 never names the host's kinds: the run waits while its turns run", async () => {
    const runId = await env.scheduleRun("not for an old gateway", bob);
    const { runner, ended, minted } = await env.startDesktop(
      bob,
      "runner-bob-protocol-3",
      {
        handlers: { "remote_session.create": async () => ({ status: "done", localSessionId: "local-old" }) },
        workHandlers: { "automation.run": async () => ({ status: "done" }) },
      },
      3,
    );
    expect(minted.protocolVersion).toBe(3);
    await until(
      "the runner never opened its wake stream",
      () => env.gateway.hub.stats().runnerStreams >= 1,
      () => "",
    );
    const created = await env.execute("remote-session:create", { target: "desktop", title: "old" }, bob);
    await until(
      "the turn never ended",
      () => ended.length >= 1,
      () => JSON.stringify(created.structuredContent),
    );
    runner.wake();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ended.map((o) => o.kind)).toEqual(["remote_session.create"]);
    expect(created.structuredContent).toMatchObject({ target: "desktop" });
    expect((await listAutomationRuns(env.sql, bob)).find((r) => r.id === runId)).toMatchObject({ status: "queued", attempt_count: 0 });
  });
});
