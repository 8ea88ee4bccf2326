import { createSessionLedger, type LedgerSession, SessionFailure } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { enqueueTask, holderTask } from "./store/enqueue-task.js";
import { sweepTasks } from "./store/sweep-tasks.js";
import { TASK_TRANSITIONS, type TaskState } from "./task-state.js";
import { transaction } from "./store/transaction.js";
import {
  type OpenworkDesktopDouble,
  type OpenworkDesktopDoubleOptions,
  QUICK_OPENWORK_PHASES,
  startOpenworkDesktopDouble,
} from "./testing/openwork-desktop-double.js";
import { capturingLogger, type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// Remote sessions on OpenWork desktops (the wire spec's §2.6–2.7, checklist 29–34, 45–57), driven
// by a double of OpenWork's remote-session desktop through the desktop Target.
const db = useTestDatabase();
let gateway: RunnerGateway;
const doubles: OpenworkDesktopDouble[] = [];
let members = 0;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, { dialects: ["desktop-runner", "openwork"], timings: { relayWaitMs: 3_000 } });
});
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((d) => d.stop()));
});
afterAll(async () => {
  await gateway.close();
});

const newMember = () => ({ organizationId: "org_ows", memberId: `mem_ows_${++members}` });
/** A released desktop (its base URL `<origin>/api/den`) on OpenWork's phases, in milliseconds instead of seconds and minutes. */
async function desktopOf(member: ReturnType<typeof newMember>, options: Partial<OpenworkDesktopDoubleOptions> = {}) {
  const double = await startOpenworkDesktopDouble({
    baseUrl: `${gateway.baseUrl}/api/den`,
    memberToken: gateway.memberToken(member),
    runnerId: `install-${member.memberId}`,
    ...QUICK_OPENWORK_PHASES,
    ...options,
  });
  doubles.push(double);
  expect(double.configured).toBe(true);
  return double;
}
const find = async (member: ReturnType<typeof newMember>, id: string) =>
  (await createSessionLedger(gateway.sql).find(gateway.call(member), id)) as LedgerSession;
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error.error : error);
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 8_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// OpenWork's wire, as a desktop speaks it (in process: the routes' fetch, no socket).
const post = (path: string, token: string, body: unknown) =>
  gateway.request(path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
const mint = async (member: ReturnType<typeof newMember>, runnerId: string, capabilities = ["remote_session_v1", "remote_session_control_v1"]) => {
  const response = await post("/v1/automation-runners/token", gateway.memberToken(member), {
    runnerId,
    protocolVersion: 1,
    supportedExecutionTargets: ["desktop"],
    capabilities,
    appVersion: "1",
    platform: "linux",
    concurrency: 1,
  });
  return ((await response.json()) as { token: string }).token;
};
const work = async (token: string) =>
  (
    (await (await gateway.request("/v1/automation-runner/work", { headers: { authorization: `Bearer ${token}` } })).json()) as {
      items: { kind: string; commandId?: string; requestId?: string }[];
    }
  ).items;

/** A new member's session delivered to an OpenWork desktop over the wire, and how that desktop reports on it. */
async function deliveredCommand(runnerId: string) {
  const member = newMember();
  const token = await mint(member, runnerId);
  const created = await gateway.sessions.create(gateway.call(member), { title: runnerId, prompt: "p" });
  const [item] = await work(token);
  await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
  await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, { status: "delivered", sessionId: `ses_${runnerId}`, workspaceId: "ws_d" });
  const report = (body: object) => post(`/v1/remote-session-commands/${item!.commandId}/session`, token, body);
  return { member, token, created, commandId: item!.commandId!, report };
}

describe("remote sessions on an OpenWork desktop", () => {
  it("(29, 45, 48, 51, 54, 55) runs create → read → send → read → stop through commands, progress and requests", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    const call = () => gateway.call(member);
    const created = await gateway.sessions.create(call(), { title: "On the Mac", prompt: "hello desktop" });
    expect(created.state).toBe("queued");
    // The desktop claims the command, creates its visible session and reports progress.
    const idle = await until(
      () => find(member, created.sessionId),
      (s) => s.state === "idle",
    );
    expect(idle).toMatchObject({ state: "idle", targetRef: { dialect: "openwork", runnerId: `install-${member.memberId}` } });
    expect(desktop.sessions.has(idle.targetSessionId!)).toBe(true);

    const first = await gateway.sessions.read(call(), idle, { limit: 20, waitMs: 0 });
    expect(first.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "hello desktop"],
      ["assistant", "echo: hello desktop"],
    ]);
    expect(first).toMatchObject({ state: "idle", finalAssistantText: "echo: hello desktop" });

    const sent = await gateway.sessions.send(call(), await find(member, created.sessionId), { prompt: "and again" });
    expect(sent.state).toBe("accepted");
    await until(
      () => find(member, created.sessionId),
      (s) => s.state === "idle" && desktop.sessions.get(idle.targetSessionId!)!.messages.length === 4,
    );
    const second = await gateway.sessions.read(call(), await find(member, created.sessionId), { limit: 20, waitMs: 0, cursor: first.cursor });
    expect(second.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "and again"],
      ["assistant", "echo: and again"],
    ]);
    expect(second.finalAssistantText).toBe("echo: and again");
    // Nothing new after the end.
    expect((await gateway.sessions.read(call(), await find(member, created.sessionId), { limit: 20, waitMs: 0, cursor: second.cursor })).messages).toEqual([]);

    await gateway.sessions.send(call(), await find(member, created.sessionId), { prompt: "SLOW work" });
    await until(
      () => find(member, created.sessionId),
      (s) => s.state === "running" && desktop.sessions.get(idle.targetSessionId!)!.status === "running",
    );
    expect(await gateway.sessions.stop(call(), await find(member, created.sessionId))).toEqual({ sessionId: created.sessionId, stopped: true });
    // The engine ends the aborted turn with its error, which the desktop reports.
    expect(desktop.sessions.get(idle.targetSessionId!)!.status).toBe("error");
    expect(desktop.retired).toBe(false);
  });

  it("(52) shows a turn waiting on the person at an OpenWork desktop as waiting_input, answered only in its app", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    const call = () => gateway.call(member);
    const created = await gateway.sessions.create(call(), { title: "asks", prompt: "ASKQ which colour?" });
    const waiting = await until(
      () => find(member, created.sessionId),
      (s) => s.state === "waiting_input",
    );
    const read = await gateway.sessions.read(call(), waiting, { limit: 20, waitMs: 0 });
    expect(read).toMatchObject({ state: "waiting_input", pending: { kind: "question", id: "openwork_question", inAppOnly: true } });
    expect(await gateway.sessions.respond(call(), waiting, { requestId: "openwork_question", answer: { text: "Red" } }).catch(codeOf)).toBe(
      "desktop_update_required",
    );
    desktop.answerInApp(waiting.targetSessionId!, "Red");
    const idle = await until(
      () => find(member, created.sessionId),
      (s) => s.state === "idle",
    );
    expect(await gateway.sessions.read(call(), idle, { limit: 20, waitMs: 0 })).toMatchObject({ state: "idle", finalAssistantText: "echo: answered Red" });
  });

  it("(30, 31) offers nothing to a desktop without the capabilities, and answers desktop_update_required for a session whose desktop lacks control", async () => {
    const member = newMember();
    // Steps down to remote sessions without control: commands yes, requests no.
    const desktop = await desktopOf(member, { capabilitySets: [["model_attention_v1", "remote_session_v1"]] });
    const created = await gateway.sessions.create(gateway.call(member), { title: "old desktop", prompt: "hi" });
    const delivered = await until(
      () => find(member, created.sessionId),
      (s) => s.targetSessionId !== null,
    );
    expect(delivered.targetSessionId).not.toBeNull();
    expect(await gateway.sessions.read(gateway.call(member), delivered, { limit: 5, waitMs: 0 }).catch(codeOf)).toBe("desktop_update_required");
    expect(await gateway.sessions.send(gateway.call(member), delivered, { prompt: "more" }).catch(codeOf)).toBe("desktop_update_required");
    expect(desktop.requests.some((r) => r.includes("remote-session-requests"))).toBe(false);
  });

  it("answers desktop_offline when only an automation-only OpenWork desktop is online, and never lists it a command", async () => {
    const member = newMember();
    const desktop = await desktopOf(member, { capabilitySets: [["model_attention_v1"]] });
    expect(await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p" }).catch(codeOf)).toBe("desktop_offline");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(desktop.requests.filter((r) => r.includes("remote-session-commands"))).toEqual([]);
  });

  it("(72) reads pending when the desktop does not answer in time, and its answer with the cursor handed out", async () => {
    const member = newMember();
    // A desktop that polls once a minute and drains no requests on its own: only wake() makes it look.
    const desktop = await desktopOf(member, { drainMs: 600_000, pollMs: 600_000 });
    const created = await gateway.sessions.create(gateway.call(member), { title: "slow to answer", prompt: "hello" });
    // wake() joins a look already under way (as the real one does): wake it until it has the command.
    const session = await until(
      () => (desktop.wake(), find(member, created.sessionId)),
      (s) => s.state === "idle",
    );
    expect(session.state).toBe("idle");
    const started = Date.now();
    const pending = await gateway.sessions.read(gateway.call(member), session, { limit: 20, waitMs: 0 });
    expect(pending).toMatchObject({ messages: [], awaitingTarget: true, fields: { deferred: { requestId: expect.stringMatching(/^rst_/) } } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    desktop.wake();
    const answered = await gateway.sessions.read(gateway.call(member), session, { limit: 20, waitMs: 0, cursor: pending.cursor });
    expect(answered.awaitingTarget).toBeUndefined();
    expect(answered.fields?.deferred).toBeUndefined();
    expect(answered.messages.map((m) => m.text)).toEqual(["hello", "echo: hello"]);
  });
});

describe("OpenWork commands and requests on the wire", () => {
  it("(33, 34, 46, 48, 49) lists a pinned command to its desktop only; claims it once; takes identical receipts again, refuses others", async () => {
    const member = newMember();
    const mine = await mint(member, "pinned-install-01");
    const other = await mint(member, "other-install-001");
    const created = await gateway.sessions.create(gateway.call(member), { title: "pinned", prompt: "p", runner: "pinned-install-01" });
    const [item] = await work(mine);
    expect(item).toMatchObject({ kind: "remote_session_create", commandId: expect.stringMatching(/^rst_/) });
    expect(await work(other)).toEqual([]);
    expect((await post(`/v1/remote-session-commands/${item!.commandId}/claim`, other, {})).status).toBe(409);
    const claim = await post(`/v1/remote-session-commands/${item!.commandId}/claim`, mine, {});
    expect(await claim.json()).toEqual({
      assignment: { commandId: item!.commandId, kind: "remote_session_create", title: "pinned", prompt: "p", model: null, expiresAt: expect.any(Number) },
    });
    const receipt = { status: "delivered", sessionId: "ses_local_1", workspaceId: "ws_1", resultSummary: "Remote session created" };
    const bad = await post(`/v1/remote-session-commands/${item!.commandId}/complete`, mine, {
      status: "failed",
      error: { code: "x", message: "y" },
      sessionId: "ses_1",
    });
    expect(bad.status).toBe(400);
    const done = await post(`/v1/remote-session-commands/${item!.commandId}/complete`, mine, receipt);
    expect(await done.json()).toEqual({ command: { id: item!.commandId, status: "delivered", sessionId: "ses_local_1", workspaceId: "ws_1" } });
    expect((await post(`/v1/remote-session-commands/${item!.commandId}/complete`, mine, receipt)).status).toBe(200);
    expect((await post(`/v1/remote-session-commands/${item!.commandId}/complete`, mine, { ...receipt, sessionId: "ses_other" })).status).toBe(409);
    expect((await find(member, created.sessionId)).targetSessionId).toBe("ses_local_1");
  });

  it("(51, 52) applies only strictly newer progress reports, keeps engine and model sticky, and 404s another member's command", async () => {
    const member = newMember();
    const token = await mint(member, "progress-install1");
    const created = await gateway.sessions.create(gateway.call(member), { title: "progress", prompt: "p" });
    const [item] = await work(token);
    await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, { status: "delivered", sessionId: "ses_p", workspaceId: "ws_p" });
    const report = (body: object) => post(`/v1/remote-session-commands/${item!.commandId}/session`, token, body);
    expect((await report({ status: "running", engine: "v2", model: { providerId: "a", modelId: "b" }, observedAt: 1_000 })).status).toBe(200);
    expect((await report({ status: "waiting", waitingFor: "permission", observedAt: 2_000 })).status).toBe(200);
    expect((await find(member, created.sessionId)).state).toBe("waiting_input");
    expect((await report({ status: "idle", observedAt: 2_000 })).status).toBe(200);
    expect((await find(member, created.sessionId)).state).toBe("waiting_input");
    const older = await report({ status: "idle", observedAt: 1_500 });
    expect([older.status, await older.json()]).toEqual([409, { error: "command_session_conflict" }]);
    expect((await report({ status: "error", error: { code: "provider_auth_failed", message: "the key was refused" }, observedAt: 3_000 })).status).toBe(200);
    expect(await find(member, created.sessionId)).toMatchObject({ state: "failed", lastError: { error: "provider_auth_failed" } });
    const [row] = await gateway.sql<{ progress: { engine: string; model: unknown } }[]>`select progress from desktop_task where id = ${item!.commandId!}`;
    expect(row?.progress).toMatchObject({ engine: "v2", model: { providerId: "a", modelId: "b" } });
    const stranger = await mint(newMember(), "stranger-install1");
    const foreign = await post(`/v1/remote-session-commands/${item!.commandId}/session`, stranger, { status: "idle", observedAt: 9_000 });
    expect([foreign.status, await foreign.json()]).toEqual([404, { error: "command_not_found" }]);
  });

  it("hears a desktop whose clock ran 10 minutes ahead once it is corrected, and takes a late replay of an ahead report as a replay", async () => {
    const { member, created, report } = await deliveredCommand("clock-install-01");
    const ahead = Date.now() + 10 * 60_000;
    const running = { status: "running", observedAt: ahead };
    expect((await report(running)).status).toBe(200);
    expect((await report({ status: "running", observedAt: ahead + 3_000 })).status).toBe(200);
    // The clock is corrected: the next report is stamped 10 minutes earlier than the last one.
    const corrected = await report({ status: "idle", finalText: "done", observedAt: Date.now() });
    expect([corrected.status, await corrected.json()]).toEqual([200, { ok: true }]);
    expect((await find(member, created.sessionId)).state).toBe("idle");
    // The first report sent again late: acknowledged, and the session stays as it is.
    expect((await report(running)).status).toBe(200);
    expect((await find(member, created.sessionId)).state).toBe("idle");
  });

  it("interrupts a turn whose desktop went quiet for 10 minutes (no lease: presence decides), and takes its report when it is back", async () => {
    const member = newMember();
    const token = await mint(member, "quiet-install-001");
    const created = await gateway.sessions.create(gateway.call(member), { title: "quiet", prompt: "p" });
    const [item] = await work(token);
    await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, { status: "delivered", sessionId: "ses_q", workspaceId: "ws_q" });
    await post(`/v1/remote-session-commands/${item!.commandId}/session`, token, { status: "running", observedAt: 1_000 });
    await sweepTasks(gateway.store);
    expect((await find(member, created.sessionId)).state).toBe("running");
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '11 minutes' where runner_id = 'quiet-install-001'`;
    await sweepTasks(gateway.store);
    expect(await find(member, created.sessionId)).toMatchObject({ state: "interrupted", lastError: { error: "desktop_lost" } });
    expect((await post(`/v1/remote-session-commands/${item!.commandId}/session`, token, { status: "idle", finalText: "done", observedAt: 2_000 })).status).toBe(
      200,
    );
    expect(await find(member, created.sessionId)).toMatchObject({ state: "idle", lastError: null });
  });

  it("(55) caps a request's outcome at 256 KiB and refuses an outcome for another action", async () => {
    const member = newMember();
    const token = await mint(member, "outcome-install-1");
    const created = await gateway.sessions.create(gateway.call(member), { title: "outcomes", prompt: "p" });
    const [item] = await work(token);
    await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, { status: "delivered", sessionId: "ses_o", workspaceId: "ws_o" });
    const reading = gateway.sessions.read(gateway.call(member), await find(member, created.sessionId), { limit: 5, waitMs: 0 });
    const requestId = await until(async () => (await work(token)).find((i) => i.kind === "remote_session_request")?.requestId, Boolean);
    const claim = await post(`/v1/remote-session-requests/${requestId}/claim`, token, {});
    expect(await claim.json()).toMatchObject({
      assignment: { requestId, action: "read", sessionId: "ses_o", commandId: item!.commandId, input: { from: "start", cursor: null, limit: 5 } },
    });
    const huge = {
      status: "done",
      outcome: {
        action: "read",
        result: {
          title: null,
          status: "idle",
          waitingFor: null,
          lastError: null,
          messageCount: 1,
          from: "start",
          nextCursor: null,
          messages: [
            {
              id: "m",
              role: "assistant",
              createdAt: 1,
              text: "x".repeat(20_000),
              truncated: false,
              toolCalls: Array(200).fill({ id: "t", name: "n", status: "completed", output: "y".repeat(2_000) }),
              error: null,
            },
          ],
        },
      },
    };
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, huge)).status).toBe(400);
    const wrong = await post(`/v1/remote-session-requests/${requestId}/complete`, token, {
      status: "done",
      outcome: { action: "stop", result: { stopped: true, reason: null } },
    });
    expect([wrong.status, await wrong.json()]).toEqual([409, { error: "request_complete_conflict" }]);
    const answer = {
      status: "done",
      outcome: {
        action: "read",
        result: {
          title: null,
          status: "idle",
          waitingFor: null,
          lastError: null,
          messageCount: 1,
          from: "start",
          nextCursor: "m1",
          messages: [{ id: "m1", role: "assistant", createdAt: 1, text: "hi", truncated: false, toolCalls: [], error: null }],
        },
      },
    };
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, answer)).status).toBe(200);
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, answer)).status).toBe(200);
    expect((await reading).messages.map((m) => m.text)).toEqual(["hi"]);
  });
  it("keeps none of a desktop's transcript: a read's answer is handed to its reader and dropped, its digest still recognising a replay", async () => {
    const { member, token, created, report } = await deliveredCommand("no-transcript-01");
    await report({ status: "idle", finalText: "THE-DESKTOP-REPLY", observedAt: 1_000 });
    const reading = gateway.sessions.read(gateway.call(member), await find(member, created.sessionId), { limit: 5, waitMs: 0 });
    const requestId = await until(async () => (await work(token)).find((i) => i.kind === "remote_session_request")?.requestId, Boolean);
    await post(`/v1/remote-session-requests/${requestId}/claim`, token, {});
    const message = (id: string, role: string, text: string) => ({ id, role, createdAt: 1, text, truncated: false, toolCalls: [], error: null });
    const result = { title: null, status: "idle", waitingFor: null, lastError: null, messageCount: 2, from: "start", nextCursor: null };
    const answer = {
      status: "done",
      outcome: { action: "read", result: { ...result, messages: [message("u1", "user", "THE-USER-PROMPT"), message("a1", "assistant", "THE-DESKTOP-REPLY")] } },
    };
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, answer)).status).toBe(200);
    // The reader gets the whole answer…
    expect((await reading).messages.map((m) => m.text)).toEqual(["THE-USER-PROMPT", "THE-DESKTOP-REPLY"]);
    // …and no row of the session keeps any of it (nor the desktop's final text from its report).
    const rows = await gateway.sql<{ row: string }[]>`select t::text as row from desktop_task t where session_id = ${created.sessionId}`;
    expect(rows.filter((r) => /THE-USER-PROMPT|THE-DESKTOP-REPLY/.test(r.row))).toEqual([]);
    // The same receipt again is still the same; another one still a conflict.
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, answer)).status).toBe(200);
    const changed = { status: "done", outcome: { action: "read", result: { ...result, messages: [message("a1", "assistant", "other")] } } };
    expect((await post(`/v1/remote-session-requests/${requestId}/complete`, token, changed)).status).toBe(409);
  });
});

describe("OpenWork desktops as released: claims, late reports, sweeps, follow-ups", () => {
  /** A session delivered to a desktop minted for `member`, its progress reported `running`. */
  const delivered = async (member: ReturnType<typeof newMember>, runnerId: string, capabilities?: string[]) => {
    const token = await mint(member, runnerId, capabilities);
    const created = await gateway.sessions.create(gateway.call(member), { title: "released", prompt: "p" });
    const [item] = await work(token);
    await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, { status: "delivered", sessionId: `ses_${runnerId}`, workspaceId: "ws_r" });
    await post(`/v1/remote-session-commands/${item!.commandId}/session`, token, { status: "running", observedAt: 1_000 });
    return { token, commandId: item!.commandId!, sessionId: created.sessionId };
  };
  /** Stops the session through the gateway, the desktop answering as OpenWork's does. */
  const stopRelayed = async (member: ReturnType<typeof newMember>, token: string, sessionId: string) => {
    const stopping = gateway.sessions.stop(gateway.call(member), await find(member, sessionId));
    const requestId = await until(async () => (await work(token)).find((i) => i.kind === "remote_session_request")?.requestId, Boolean);
    await post(`/v1/remote-session-requests/${requestId}/claim`, token, {});
    await post(`/v1/remote-session-requests/${requestId}/complete`, token, {
      status: "done",
      outcome: { action: "stop", result: { stopped: true, reason: null } },
    });
    expect(await stopping).toEqual({ sessionId, stopped: true });
    expect((await find(member, sessionId)).state).toBe("stopped");
  };

  it("(46, 47) answers a second claim of its own command 409 command_claim_conflict, unless the desktop keeps a recovery journal", async () => {
    const member = newMember();
    const token = await mint(member, "no-journal-install");
    await gateway.sessions.create(gateway.call(member), { title: "once", prompt: "run me once" });
    const [item] = await work(token);
    const first = await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    expect(first.status).toBe(200);
    // The first answer was lost: without a journal, a second claim must not hand the prompt out again.
    const again = await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    expect([again.status, await again.json()]).toEqual([409, { error: "command_claim_conflict" }]);

    const journaled = newMember();
    const recovering = await mint(journaled, "journal-install-01", ["remote_session_v1", "remote_session_control_v1", "remote_session_recovery_v1"]);
    await gateway.sessions.create(gateway.call(journaled), { title: "recover", prompt: "p" });
    const [own] = await work(recovering);
    const claimed = await (await post(`/v1/remote-session-commands/${own!.commandId}/claim`, recovering, {})).json();
    // Its own claim is listed to it again (first), and claimed again with the same assignment.
    expect(await work(recovering)).toEqual([{ kind: "remote_session_create", commandId: own!.commandId }]);
    const recovered = await post(`/v1/remote-session-commands/${own!.commandId}/claim`, recovering, {});
    expect([recovered.status, await recovered.json()]).toEqual([200, claimed]);
    expect(await work(token)).toEqual([]);
  });

  it("(54) answers a second claim of its own request 409 request_claim_conflict without a recovery journal", async () => {
    const member = newMember();
    const { token, sessionId } = await delivered(member, "request-twice-inst");
    const reading = gateway.sessions.read(gateway.call(member), await find(member, sessionId), { limit: 5, waitMs: 0 }).catch(() => null);
    const requestId = await until(async () => (await work(token)).find((i) => i.kind === "remote_session_request")?.requestId, Boolean);
    expect((await post(`/v1/remote-session-requests/${requestId}/claim`, token, {})).status).toBe(200);
    const again = await post(`/v1/remote-session-requests/${requestId}/claim`, token, {});
    expect([again.status, await again.json()]).toEqual([409, { error: "request_claim_conflict" }]);
    await post(`/v1/remote-session-requests/${requestId}/complete`, token, { status: "failed", error: { code: "request_failed", message: "test" } });
    await reading;
  });

  it("takes a command's receipt that comes after its lease lapsed: the task goes interrupted -> done, an edge of TASK_TRANSITIONS", async () => {
    const member = newMember();
    const token = await mint(member, "late-receipt-install");
    await gateway.sessions.create(gateway.call(member), { title: "late", prompt: "p" });
    const [item] = await work(token);
    await post(`/v1/remote-session-commands/${item!.commandId}/claim`, token, {});
    const stateOf = async () => (await gateway.sql<{ state: TaskState }[]>`select state from desktop_task where id = ${item!.commandId!}`)[0]!.state;
    await gateway.sql`update desktop_task set lease_expires_at = now() - interval '1 second' where id = ${item!.commandId!}`;
    await sweepTasks(gateway.store);
    expect(await stateOf()).toBe("interrupted");
    const receipt = await post(`/v1/remote-session-commands/${item!.commandId}/complete`, token, {
      status: "delivered",
      sessionId: "ses_late",
      workspaceId: "ws_l",
    });
    expect(receipt.status).toBe(200);
    expect(await stateOf()).toBe("done");
    expect(TASK_TRANSITIONS.interrupted).toContain("done");
  });

  it("takes a progress report after a stop as data: 200, recorded on the command, the session stays stopped", async () => {
    const member = newMember();
    const { token, commandId, sessionId } = await delivered(member, "late-report-inst");
    await stopRelayed(member, token, sessionId);
    const errorsBefore = gateway.logger.lines.filter((l) => l.startsWith("error")).length;
    // The released desktop reports the aborted turn, then idle.
    const aborted = await post(`/v1/remote-session-commands/${commandId}/session`, token, {
      status: "error",
      error: { code: "execution_failed", message: "Aborted" },
      observedAt: 2_000,
    });
    expect([aborted.status, await aborted.json()]).toEqual([200, { ok: true }]);
    const idle = await post(`/v1/remote-session-commands/${commandId}/session`, token, { status: "idle", observedAt: 3_000 });
    expect(idle.status).toBe(200);
    const [row] = await gateway.sql<{ progress: { status: string } }[]>`select progress from desktop_task where id = ${commandId}`;
    expect(row?.progress.status).toBe("idle");
    expect(await find(member, sessionId)).toMatchObject({ state: "stopped", lastError: null });
    expect(gateway.logger.lines.filter((l) => l.startsWith("error"))).toHaveLength(errorsBefore);
  });

  it("sweeps everyone's work past a stopped session whose desktop went quiet; a session that cannot be updated fails alone, logged once", async () => {
    const member = newMember();
    const { token, commandId, sessionId } = await delivered(member, "quiet-stopped-ins");
    await stopRelayed(member, token, sessionId);
    // The command still reads `running` (as one stopped before stops were recorded on it does):
    // the presence sweep marks it lost, a move the stopped session refuses.
    await gateway.sql`update desktop_task set progress = progress || '{"status":"running"}'::jsonb where id = ${commandId}`;
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '11 minutes' where runner_id = 'quiet-stopped-ins'`;
    // Another organization's store-and-forward task past its deadline, and one whose session refuses every update.
    const other = { organizationId: "org_ows_other", memberId: `mem_ows_${++members}` };
    await mint(other, "other-org-install1");
    const later = await gateway.sessions.create(gateway.call(other), {
      title: "deliver by",
      prompt: "p",
      deliverBy: new Date(Date.now() + 60_000).toISOString(),
    });
    const poisoned = await gateway.sessions.create(gateway.call(other), {
      title: "poisoned",
      prompt: "p",
      deliverBy: new Date(Date.now() + 60_000).toISOString(),
    });
    await gateway.sql`update desktop_task set claim_deadline = now() - interval '1 second', deliver_by = now() - interval '1 second' where session_id in ${gateway.sql([later.sessionId, poisoned.sessionId])}`;
    await gateway.sql.unsafe(`
      create function refuse_poisoned() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$;
      create trigger refuse_poisoned before update on remote_session for each row when (old.id = '${poisoned.sessionId}') execute function refuse_poisoned();`);
    const logger = capturingLogger();
    try {
      await sweepTasks(gateway.store, { logger });
      await sweepTasks(gateway.store, { logger });
    } finally {
      await gateway.sql.unsafe("drop trigger refuse_poisoned on remote_session; drop function refuse_poisoned();");
    }
    expect(await find(member, sessionId)).toMatchObject({ state: "stopped", lastError: null });
    expect((await gateway.sql<{ status: string }[]>`select progress->>'status' as status from desktop_task where id = ${commandId}`)[0]?.status).toBe("lost");
    expect(await find(other, later.sessionId)).toMatchObject({ state: "expired", lastError: { error: "delivery_deadline_passed" } });
    expect(logger.lines.filter((l) => l.includes("could not be updated"))).toHaveLength(1);
    expect(logger.lines.join("\n")).toContain(poisoned.sessionId);
  });

  it("ends a follow-up no desktop took as interrupted with the reason, instead of leaving the session idle", async () => {
    const member = newMember();
    const { token, commandId, sessionId } = await delivered(member, "died-before-inst");
    await post(`/v1/remote-session-commands/${commandId}/session`, token, { status: "idle", finalText: "first answer", observedAt: 2_000 });
    expect((await find(member, sessionId)).state).toBe("idle");
    // The desktop dies; the follow-up waits for it, and its deadline passes.
    await gateway.sessions.send(gateway.call(member), await find(member, sessionId), { prompt: "never run" });
    expect((await find(member, sessionId)).state).toBe("queued");
    await gateway.sql`update desktop_task set claim_deadline = now() - interval '1 second' where session_id = ${sessionId} and kind = 'remote_session.send'`;
    await sweepTasks(gateway.store);
    expect(await find(member, sessionId)).toMatchObject({
      state: "interrupted",
      lastError: { error: "runner_unavailable", message: expect.stringContaining("never ran") },
    });
  });
});

describe("an unmodified OpenWork desktop (the double, on OpenWork's own phases)", () => {
  const commandOf = async (sessionId: string) =>
    (
      await gateway.sql<
        { id: string; progress: Record<string, unknown> | null }[]
      >`select id, progress from desktop_task where session_id = ${sessionId} and kind = 'remote_session.create'`
    )[0]!;
  const idleSession = async (member: ReturnType<typeof newMember>, prompt = "hello") => {
    const created = await gateway.sessions.create(gateway.call(member), { title: "released", prompt });
    return until(
      () => find(member, created.sessionId),
      (s) => s.state === "idle",
    );
  };

  it("reaches the gateway at <origin>/api/den and uses its token there: mint, work, inventory in OpenWork's body, nothing refused", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    await until(
      async () => desktop.requests,
      (r) => r.includes("PUT /v1/automation-runner/inventory -> 200"),
    );
    expect(desktop.requests).toContain("PUT /v1/automation-runner/inventory -> 200");
    expect(desktop.notes).toEqual([]);
    const [row] = await gateway.sql<
      { inventory: { workspaces: { workspaceId: string }[] } }[]
    >`select inventory from desktop_runner where runner_id = ${`install-${member.memberId}`}`;
    expect(row?.inventory.workspaces[0]?.workspaceId).toBe("ws_double");
    // Sent only when it changed: one PUT for an inventory that stays the same.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(desktop.requests.filter((r) => r.startsWith("PUT")).length).toBe(1);
    expect(desktop.requests.filter((r) => !/-> 200$/.test(r))).toEqual([]);
  });

  it("reports `error` (Aborted) after a relayed stop and has it taken; once that desktop is gone, the sweep still serves everyone", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    const session = await idleSession(member);
    await gateway.sessions.send(gateway.call(member), session, { prompt: "SLOW work" });
    await until(
      () => find(member, session.id),
      (s) => s.state === "running" && desktop.sessions.get(session.targetSessionId!)?.status === "running",
    );
    expect(await gateway.sessions.stop(gateway.call(member), await find(member, session.id))).toMatchObject({ stopped: true });
    // The stop's answer and the desktop's report of the aborted turn race: whichever comes last,
    // the command keeps the engine's "Aborted", and its status says error or stopped.
    const command = await until(
      () => commandOf(session.id),
      (c) => (c.progress?.error as { message?: string } | undefined)?.message === "Aborted",
    );
    expect(command.progress).toMatchObject({ status: expect.stringMatching(/^(error|stopped)$/), error: { message: "Aborted" } });
    expect(desktop.requests.filter((r) => r.includes("/session ->") && !r.endsWith("-> 200"))).toEqual([]);
    expect((await find(member, session.id)).state).toBe("stopped");

    // The desktop quits; ten minutes later another organization's store-and-forward task is due.
    await desktop.stop();
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '11 minutes' where runner_id = ${`install-${member.memberId}`}`;
    const other = { organizationId: "org_ows_later", memberId: `mem_ows_${++members}` };
    await mint(other, "later-org-install");
    const later = await gateway.sessions.create(gateway.call(other), {
      title: "deliver by",
      prompt: "p",
      deliverBy: new Date(Date.now() + 60_000).toISOString(),
    });
    await gateway.sql`update desktop_task set claim_deadline = now() - interval '1 second', deliver_by = now() - interval '1 second' where session_id = ${later.sessionId}`;
    await sweepTasks(gateway.store);
    expect((await find(other, later.sessionId)).state).toBe("expired");
    expect((await find(member, session.id)).state).toBe("stopped");
  });

  it("watches the first turn: an engine that never answers fails the command no_reply, a refused key provider_auth_failed", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    expect(desktop.configured).toBe(true);
    for (const [prompt, code] of [
      ["NOREPLY please", "no_reply"],
      ["AUTHFAIL please", "provider_auth_failed"],
    ] as const) {
      const created = await gateway.sessions.create(gateway.call(member), { title: code, prompt });
      const failed = await until(
        () => find(member, created.sessionId),
        (s) => s.state === "failed",
      );
      expect(failed).toMatchObject({
        state: "failed",
        targetSessionId: null,
        lastError: { error: code, message: expect.stringContaining("local session ses_") },
      });
    }
    // A failed command carries no session ids, and the gateway takes it as it is. The double logs a
    // request once its answer arrives, which may be after the gateway's commit the loop above saw.
    const completions = await until(
      async () => desktop.requests.filter((r) => r.includes("/complete")),
      (logged) => logged.length >= 2,
      3_000,
    );
    expect(completions).toEqual([expect.stringMatching(/-> 200$/), expect.stringMatching(/-> 200$/)]);
  });

  it("answers different_turn to a stop guarded by another turn's message id", async () => {
    const member = newMember();
    const desktop = await desktopOf(member);
    const session = await idleSession(member);
    const request = await transaction(gateway.store, (tx, hints) =>
      enqueueTask(
        tx,
        hints,
        member,
        holderTask(session, {
          kind: "remote_session.stop",
          requirements: { protocolVersion: 1, capabilities: ["remote_session_control_v1"] },
          claimWithinMs: 60_000,
          input: { messageId: "msg_another_turn" },
        }),
      ),
    );
    desktop.wake();
    const [done] = await until(
      () => gateway.sql<{ state: string; completion: unknown }[]>`select state, completion from desktop_task where id = ${request.id}`,
      ([t]) => t?.state === "done",
    );
    expect(done?.completion).toEqual({ status: "done", outcome: { action: "stop", result: { stopped: false, reason: "different_turn" } } });
  });

  it("pages backward for from: end, and the read's cursor goes on after the newest message (no repeats)", async () => {
    const member = newMember();
    await desktopOf(member);
    const session = await idleSession(member);
    await gateway.sessions.send(gateway.call(member), session, { prompt: "and again" });
    await until(
      () => find(member, session.id),
      (s) => s.state === "idle",
    );
    const tail = await gateway.sessions.read(gateway.call(member), await find(member, session.id), { limit: 2, waitMs: 0, from: "end" });
    expect(tail.messages.map((m) => m.text)).toEqual(["and again", "echo: and again"]);
    const after = await gateway.sessions.read(gateway.call(member), await find(member, session.id), { limit: 20, waitMs: 0, cursor: tail.cursor });
    expect(after.messages).toEqual([]);
  });

  it("drains /pending only within its activity window, and polls work on its own phase", async () => {
    const member = newMember();
    const desktop = await desktopOf(member, { activityWindowMs: 400, pollMs: 200 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(desktop.requests.filter((r) => r.includes("/pending"))).toEqual([]);
    await idleSession(member);
    const during = desktop.requests.filter((r) => r.includes("/pending")).length;
    expect(during).toBeGreaterThan(0);
    // Past the window, with its watch over: no more drains, and the work poll goes on.
    await new Promise((resolve) => setTimeout(resolve, 700));
    const settled = desktop.requests.length;
    const pendingThen = desktop.requests.filter((r) => r.includes("/pending")).length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(desktop.requests.filter((r) => r.includes("/pending")).length).toBe(pendingThen);
    expect(desktop.requests.slice(settled).filter((r) => r.includes("/work")).length).toBeGreaterThanOrEqual(2);
  });

  it("retries after 5xx: backs off and polls work again, sends a failed completion once more", async () => {
    const member = newMember();
    // Work polls fail until the command exists, then three times more: only a retry can find it.
    const failing = { work: Number.POSITIVE_INFINITY, complete: 1 };
    // The network in front of the gateway answers 503 to the first work polls and the first completion.
    const flaky: typeof fetch = async (input, init) => {
      const path = new URL(String(input)).pathname;
      const kind = path.endsWith("/automation-runner/work")
        ? "work"
        : path.includes("/remote-session-commands/") && path.endsWith("/complete")
          ? "complete"
          : null;
      if (kind && failing[kind]-- > 0) return new Response(JSON.stringify({ error: "unavailable" }), { status: 503 });
      return fetch(input, init);
    };
    const desktop = await desktopOf(member, { fetch: flaky, pollMs: 60_000, backoffCapMs: 100 });
    const created = await gateway.sessions.create(gateway.call(member), { title: "flaky", prompt: "hello" });
    failing.work = 3;
    expect(
      (
        await until(
          () => find(member, created.sessionId),
          (s) => s.state === "idle",
        )
      ).state,
    ).toBe("idle");
    const work = desktop.requests.filter((r) => r.startsWith("GET /v1/automation-runner/work"));
    expect(work.filter((r) => r.endsWith("-> 200"))).toHaveLength(1);
    expect(desktop.requests.filter((r) => r.includes("/complete"))).toEqual([expect.stringMatching(/-> 503$/), expect.stringMatching(/-> 200$/)]);
  });

  it("mints again every refreshMs, and at once after its credential is refused (401); revoked, it works on only once its owner re-enabled it", async () => {
    const member = newMember();
    const desktop = await desktopOf(member, { refreshMs: 300 });
    // Three mints take two refreshes (~600 ms); a loaded machine may take longer, never forever.
    const minted = () => desktop.requests.filter((r) => r.startsWith("POST /v1/automation-runners/token")).length;
    await until(
      async () => minted(),
      (n) => n >= 3,
      5_000,
    );
    expect(minted()).toBeGreaterThanOrEqual(3);
    // The owner revokes the desktop: its next runner request is refused, it retires the credential and mints again.
    const revoked = await fetch(`${gateway.baseUrl}/v1/desktop-runner/runners/install-${member.memberId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${gateway.memberToken(member)}` },
    });
    expect(revoked.status).toBe(200);
    const mints = minted();
    await until(async () => desktop.retired, Boolean, 3_000);
    expect(desktop.retired).toBe(true);
    // Its mints are refused until the owner re-enables it; the next refresh then brings it back.
    await until(
      async () => desktop.notes.filter((n) => n.startsWith("mint failed")).length,
      (n) => n > 0,
      3_000,
    );
    expect(desktop.configured).toBe(false);
    const enabled = await fetch(`${gateway.baseUrl}/v1/desktop-runner/runners/install-${member.memberId}/enable`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.memberToken(member)}` },
    });
    expect(enabled.status).toBe(200);
    const session = await idleSession(member);
    expect(session.state).toBe("idle");
    expect(minted()).toBeGreaterThan(mints);
  });
});
