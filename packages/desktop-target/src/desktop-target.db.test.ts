import { createSessionLedger, type LedgerSession, SessionFailure, type MemberScope } from "@openwork/remote-session-core";
import type { Assignment } from "@openwork/runner-protocol";
import { createRunnerClient, type Runner, type RunnerHandlers, runRunner } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSweeper } from "./sweeper.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
let sweeper: { stop(): Promise<void> };
const runners: Runner[] = [];
const SECRET_PROMPT = "PROMPT-TEXT-THAT-MUST-NOT-BE-LOGGED";
let members = 0;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
  sweeper = startSweeper({ ...gateway.store, timings: { sweepIntervalMs: 200 } });
});
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await sweeper.stop();
  // No prompt text in any log line the gateway wrote during the whole file.
  expect(gateway.logger.lines.join("\n")).not.toContain(SECRET_PROMPT);
  await gateway.close();
});

const newMember = (): MemberScope => ({ organizationId: "org_desktop", memberId: `mem_${++members}_${Date.now()}` });
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);
const ledgerFind = (member: MemberScope, id: string) => createSessionLedger(gateway.sql).find(gateway.call(member), id) as Promise<LedgerSession>;

async function startDesktop(member: MemberScope, runnerId: string, handlers: RunnerHandlers, options: { name?: string; capabilities?: string[] } = {}) {
  const token = await gateway.registerRunner(member, runnerId, options);
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token, retry: { limit: 2, backoff: { baseMs: 20, maxMs: 100, random: () => 0.5 } } });
  const runner = runRunner({ client, handlers, pollIntervalMs: 600_000, backoff: { baseMs: 20, maxMs: 100, random: () => 0.5 } });
  runners.push(runner);
  return { client, runner };
}

/** A new member's session whose first turn a runner has claimed and bound, without answering yet. */
async function startedTurn(runnerId: string, localSessionId: string, capabilities?: string[]) {
  const member = newMember();
  const call = gateway.call(member);
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId, capabilities ? { capabilities } : {}) });
  const created = await gateway.sessions.create(call, { title: "a turn", prompt: "question" });
  const [task] = (await client.work()).items;
  const { attempt } = await client.claim(task!.taskId);
  await client.postEvents(task!.taskId, attempt, [{ sequence: 1, type: "session.bound", payload: { localSessionId } }]);
  return { member, call, client, created, task, attempt };
}

/** A desktop engine double: makes a local session and answers each prompt with one message. */
function echoEngine(name: string, seen: Assignment[]): RunnerHandlers {
  return {
    "remote_session.create": async (assignment, { emit }) => {
      seen.push(assignment);
      const localSessionId = `ses_${name}_${assignment.taskId.slice(-6)}`;
      emit({ type: "session.bound", payload: { localSessionId } });
      emit({ type: "status", payload: { status: "running" } });
      emit({ type: "assistant.delta", payload: { messageId: "m1", text: "Hello " } });
      emit({ type: "assistant.delta", payload: { messageId: "m1", text: "from " } });
      emit({ type: "assistant.final", payload: { messageId: "m1", text: `Hello from ${name}` } });
      return { status: "done", localSessionId };
    },
    "remote_session.send": async (assignment, { emit }) => {
      seen.push(assignment);
      emit({ type: "tool.call", payload: { callId: "c1", name: "bash", status: "completed" } });
      emit({ type: "assistant.final", payload: { messageId: `m-${assignment.messageId}`, text: `Follow-up answered by ${name}` } });
      return { status: "done", localSessionId: assignment.localSessionId };
    },
  };
}

describe("the desktop target end to end", () => {
  it("creates on the named desktop, serves the transcript, and routes a follow-up to the same runner and local session", async () => {
    const member = newMember();
    const macSeen: Assignment[] = [];
    const linuxSeen: Assignment[] = [];
    await startDesktop(member, "runner-mac-0001", echoEngine("mac", macSeen), { name: "Studio Mac" });
    await startDesktop(member, "runner-linux-0001", echoEngine("linux", linuxSeen), { name: "Linux box" });
    // The most recently seen desktop would be the Linux box; the pin by name wins.
    const call = gateway.call(member);
    const created = await gateway.sessions.create(call, { title: "Fix the build", prompt: `${SECRET_PROMPT} 1`, runner: "studio mac" });
    expect(created).toMatchObject({ target: "desktop", state: "queued", fields: { runner: { runnerId: "runner-mac-0001", name: "Studio Mac" } } });

    const started = Date.now();
    const first = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 10_000 });
    // Woken by the runner's events through NOTIFY, well before the 10 s wait ran out.
    expect(Date.now() - started).toBeLessThan(5_000);
    const settled = await eventually(async () => {
      const read = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 0 });
      return read.state === "idle" ? read : undefined;
    });
    expect(first.messages.length).toBeGreaterThan(0);
    expect(settled.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", null],
      ["assistant", "Hello from mac"],
    ]);
    expect(settled.finalAssistantText).toBe("Hello from mac");
    expect(macSeen).toHaveLength(1);
    expect(linuxSeen).toHaveLength(0);
    const session = await ledgerFind(member, created.sessionId);
    expect(session.targetSessionId).toMatch(/^ses_mac_/);

    const sent = await gateway.sessions.send(call, session, { prompt: `${SECRET_PROMPT} 2` });
    expect(sent).toMatchObject({ state: "accepted", alreadyPresent: false, messageId: expect.stringMatching(/^msg_/) });
    const next = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { cursor: settled.cursor, limit: 20, waitMs: 10_000 });
    const turn = await eventually(async () => {
      const read = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { cursor: settled.cursor, limit: 20, waitMs: 0 });
      return read.state === "idle" && read.messages.length === 2 ? read : undefined;
    });
    expect(next.messages.length).toBeGreaterThan(0);
    // Only the new turn: no message of the first turn is repeated.
    expect(turn.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", null],
      ["assistant", "Follow-up answered by mac"],
    ]);
    expect(turn.messages[0]!.id).toBe(sent.messageId);
    expect(turn.messages[1]!.toolCalls).toEqual([{ id: "c1", name: "bash", status: "completed" }]);
    expect(turn.finalAssistantText).toBe("Follow-up answered by mac");
    expect(macSeen[1]).toMatchObject({ kind: "remote_session.send", localSessionId: session.targetSessionId, messageId: sent.messageId });
    expect(linuxSeen).toHaveLength(0);

    // Reading again from the end: nothing new, and the old reply is not reported as new.
    const again = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { cursor: turn.cursor, limit: 20, waitMs: 0 });
    expect(again.messages).toEqual([]);
    expect(again.finalAssistantText).toBeUndefined();
  });

  it("answers desktop_offline at once, with the human step, when no desktop is present", async () => {
    const member = newMember();
    const started = Date.now();
    const none = await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p" }).catch(codeOf);
    expect(none).toMatchObject({ error: "desktop_offline", retryable: true, action: expect.stringContaining("Open OpenWork Desktop") });
    expect(Date.now() - started).toBeLessThan(1_000);

    await gateway.registerRunner(member, "runner-asleep-0001", { name: "Old Laptop" });
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '11 minutes' where runner_id = 'runner-asleep-0001'`;
    const stale = await gateway.sessions.create(gateway.call(member), { title: "t" }).catch(codeOf);
    expect(stale).toMatchObject({ error: "desktop_offline", action: "Open OpenWork Desktop on Old Laptop and sign in, then try again." });
    // Pinned to it by name: that computer is offline.
    const pinned = await gateway.sessions.create(gateway.call(member), { title: "t", runner: "Old Laptop" }).catch(codeOf);
    expect(pinned).toMatchObject({ error: "computer_offline", retryable: true, action: "Open OpenWork Desktop on Old Laptop and sign in, then try again." });
    const [{ n }] = (await gateway.sql`select count(*)::int as n from remote_session where user_id = ${gateway.call(member).userId}`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  });

  it("refuses an unknown or ambiguous pin, and pins by runner id", async () => {
    const member = newMember();
    await gateway.registerRunner(member, "runner-twin-0001", { name: "Twin" });
    await gateway.registerRunner(member, "runner-twin-0002", { name: "Twin" });
    const call = gateway.call(member);
    expect(await gateway.sessions.create(call, { title: "t", runner: "Nobody" }).catch(codeOf)).toMatchObject({
      error: "unknown_computer",
      context: { computers: expect.arrayContaining([{ computerId: "runner-twin-0001", name: "Twin" }]) },
    });
    expect(await gateway.sessions.create(call, { title: "t", runner: "twin" }).catch(codeOf)).toMatchObject({ error: "ambiguous_computer" });
    const byId = await gateway.sessions.create(call, { title: "t", runner: "runner-twin-0002" });
    expect(byId.fields?.runner).toEqual({ runnerId: "runner-twin-0002", name: "Twin" });
  });

  it("reads a turn that asks as waiting_input, and hands the answer to the desktop holding it while the turn runs", async () => {
    const { member, call, client, created, task, attempt } = await startedTurn("runner-asks-0001", "ses_local_asks", [
      "session_create_v1",
      "session_respond_v1",
    ]);
    const asked = { requestId: "per_asked1", kind: "permission" as const, title: "bash", detail: "rm -rf build" };
    await client.postEvents(task!.taskId, attempt, [{ sequence: 2, type: "input.requested", payload: asked }]);
    const read = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 0 });
    expect(read).toMatchObject({
      state: "waiting_input",
      pending: { kind: "permission", id: "per_asked1", title: "bash", detail: "rm -rf build", askedAt: expect.any(String) },
    });
    expect((await ledgerFind(member, created.sessionId)).state).toBe("waiting_input");
    const session = await ledgerFind(member, created.sessionId);
    expect(await gateway.sessions.respond(call, session, { requestId: "per_other", answer: { permission: "once" } }).catch(codeOf)).toMatchObject({
      error: "input_not_pending",
    });
    expect(await gateway.sessions.respond(call, session, { requestId: "per_asked1", answer: { text: "yes" } }).catch(codeOf)).toMatchObject({
      error: "invalid_capability_arguments",
    });
    // The answer is work for the same desktop, offered while its turn is still claimed.
    const responding = gateway.sessions.respond(call, session, { requestId: "per_asked1", answer: { permission: "always" } });
    const item = await eventually(async () => (await client.work()).items.find((i) => i.kind === "remote_session.respond"));
    const answer = await client.claim(item.taskId);
    expect(answer).toMatchObject({
      kind: "remote_session.respond",
      localSessionId: "ses_local_asks",
      requestId: "per_asked1",
      answer: { permission: "always" },
    });
    await client.complete(item.taskId, { attempt: answer.attempt, status: "done", localSessionId: "ses_local_asks" });
    expect(await responding).toEqual({ sessionId: created.sessionId, requestId: "per_asked1", state: "running", alreadyAnswered: false, delivered: true });
    // The human's answer lived in the task only until the desktop took it.
    const [kept] = await gateway.sql<{ input: unknown }[]>`select input from desktop_task where id = ${item.taskId}`;
    expect(kept?.input).toEqual({ requestId: "per_asked1" });
    // The turn reports the request resolved on its own stream, later: meanwhile the delivered
    // answer is what says it asks nothing (the session moved with it), and answering it again queues nothing.
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");
    const answered = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 0 });
    expect(answered.state).toBe("running");
    expect(answered.pending).toBeUndefined();
    const again = { requestId: "per_asked1", answer: { permission: "once" as const } };
    expect(await gateway.sessions.respond(call, await ledgerFind(member, created.sessionId), again).catch(codeOf)).toMatchObject({
      error: "input_not_pending",
    });
    expect((await client.work()).items).toEqual([]);
    await client.postEvents(task!.taskId, attempt, [{ sequence: 3, type: "input.resolved", payload: { requestId: "per_asked1" } }]);
    const after = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 0 });
    expect(after.state).toBe("running");
    expect(after.pending).toBeUndefined();

    // Two requests open at once: an answer to the later one leaves the session waiting on the
    // earlier; a runner that asks again under an id it used before asks anew.
    const ask = (requestId: string) => ({ requestId, kind: "permission" as const, title: "bash", detail: `run ${requestId}` });
    await client.postEvents(task!.taskId, attempt, [
      { sequence: 4, type: "input.requested", payload: ask("per_first") },
      { sequence: 5, type: "input.requested", payload: ask("per_asked1") },
    ]);
    const deliver = async (requestId: string) => {
      const responding = gateway.sessions.respond(call, await ledgerFind(member, created.sessionId), { requestId, answer: { permission: "once" } });
      const work = await eventually(async () => (await client.work()).items.find((i) => i.kind === "remote_session.respond"));
      const claimed = await client.claim(work.taskId);
      await client.complete(work.taskId, { attempt: claimed.attempt, status: "done", localSessionId: "ses_local_asks" });
      return responding;
    };
    const reread = () => ledgerFind(member, created.sessionId).then((row) => gateway.sessions.read(call, row, { limit: 20, waitMs: 0 }));
    expect(await reread()).toMatchObject({ state: "waiting_input", pending: { id: "per_asked1" } });
    await deliver("per_asked1");
    expect((await ledgerFind(member, created.sessionId)).state).toBe("waiting_input");
    expect(await reread()).toMatchObject({ state: "waiting_input", pending: { id: "per_first" } });
    await deliver("per_first");
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");
    expect((await reread()).pending).toBeUndefined();
  });

  it("answers desktop_update_required when the desktop holding a waiting session cannot take answers", async () => {
    const { member, call, client, created, task, attempt } = await startedTurn("runner-mute-0001", "ses_local_mute", ["session_create_v1"]);
    await client.postEvents(task!.taskId, attempt, [
      { sequence: 2, type: "input.requested", payload: { requestId: "que_mute1", kind: "question", title: "Colour", detail: "Which?" } },
    ]);
    const session = await ledgerFind(member, created.sessionId);
    expect(await gateway.sessions.respond(call, session, { requestId: "que_mute1", answer: { text: "Red" } }).catch(codeOf)).toMatchObject({
      error: "desktop_update_required",
    });
    expect((await client.work()).items).toEqual([]);
  });

  it("writes nothing for a heartbeat that finds more than half the lease left, and extends a shorter one", async () => {
    const { client, task, attempt } = await startedTurn("runner-beat-0001", "ses_local_beat");
    const row = async () =>
      (
        await gateway.sql<
          { version: string; lease: Date }[]
        >`select xmin::text as version, lease_expires_at as lease from desktop_task where id = ${task!.taskId}`
      )[0]!;
    const before = await row();
    const quiet = await client.heartbeat(task!.taskId, attempt);
    expect(quiet).toMatchObject({ leaseValid: true, leaseExpiresAt: before.lease.toISOString(), cancelRequested: false });
    expect((await row()).version).toBe(before.version);
    await gateway.sql`update desktop_task set lease_expires_at = now() + interval '1 second' where id = ${task!.taskId}`;
    const short = await row();
    const extended = await client.heartbeat(task!.taskId, attempt);
    expect(Date.parse(extended.leaseExpiresAt!)).toBeGreaterThan(short.lease.getTime() + 1_000);
    expect(await client.heartbeat(task!.taskId, attempt + 1)).toMatchObject({ leaseValid: false, leaseExpiresAt: null });
  });

  it("never offers a task to a runner lacking a capability it needs", async () => {
    const member = newMember();
    const oldToken = await gateway.registerRunner(member, "runner-old-0001", { name: "Old", capabilities: ["session_create_v1"] });
    const old = createRunnerClient({ baseUrl: gateway.baseUrl, token: oldToken });
    const call = gateway.call(member);
    // Pinned to it: refused at once with the human step.
    expect(
      await gateway.sessions.create(call, { title: "t", runner: "Old", model: { providerId: "openai", modelId: "gpt", variant: "high" } }).catch(codeOf),
    ).toMatchObject({
      error: "desktop_update_required",
      action: "Update OpenWork Desktop on Old, then try again.",
    });
    // Unpinned with only that runner online: den-api's answer, no capable desktop.
    expect(await gateway.sessions.create(call, { title: "t", model: { providerId: "openai", modelId: "gpt", variant: "high" } }).catch(codeOf)).toMatchObject({
      error: "desktop_offline",
    });
    // Store-and-forward to any desktop: the old runner never sees it; a current one does.
    const deliverBy = new Date(Date.now() + 60_000).toISOString();
    await gateway.sessions.create(call, { title: "t", deliverBy, model: { providerId: "openai", modelId: "gpt", variant: "high" } });
    expect((await old.work()).items).toEqual([]);
    const currentToken = await gateway.registerRunner(member, "runner-new-0001", { name: "New" });
    const current = createRunnerClient({ baseUrl: gateway.baseUrl, token: currentToken });
    expect((await current.work()).items).toHaveLength(1);
  });

  it("expires an undelivered store-and-forward task within seconds of deliverBy", async () => {
    const member = newMember();
    const deliverBy = new Date(Date.now() + 1_000);
    const created = await gateway.sessions.create(gateway.call(member), { title: "later", prompt: SECRET_PROMPT, deliverBy: deliverBy.toISOString() });
    expect(created).toMatchObject({ state: "queued", fields: { expiresAt: deliverBy.toISOString() } });
    expect(created.fields?.runner).toBeUndefined();
    const expired = await eventually(async () => {
      const session = await ledgerFind(member, created.sessionId);
      return session.state === "expired" ? session : undefined;
    }, 8_000);
    expect(expired.updatedAt.getTime() - deliverBy.getTime()).toBeLessThan(5_000);
    expect(expired.lastError).toEqual({ error: "delivery_deadline_passed", message: "no desktop claimed the task before its deliverBy time" });
    const [task] = await gateway.sql<{ prompt: string | null }[]>`select prompt from desktop_task where session_id = ${created.sessionId}`;
    expect(task!.prompt).toBeNull();
    expect(await gateway.sessions.send(gateway.call(member), expired, { prompt: "again" }).catch(codeOf)).toMatchObject({ error: "session_not_active" });
  });

  it("expires a task no desktop picked up by its claim deadline, with cause runner_unavailable", async () => {
    const member = newMember();
    await gateway.registerRunner(member, "runner-idle-000001", { name: "Idle" });
    const created = await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p" });
    // As if the claim deadline (10 min by default) were about to pass.
    await gateway.sql`update desktop_task set claim_deadline = now() + interval '300 milliseconds' where session_id = ${created.sessionId}`;
    const expired = await eventually(async () => {
      const session = await ledgerFind(member, created.sessionId);
      return session.state === "expired" ? session : undefined;
    }, 5_000);
    expect(expired.lastError).toMatchObject({ error: "runner_unavailable" });
  });

  it("replays the wake-up hints a stream missed after Last-Event-ID", async () => {
    const member = newMember();
    const token = await gateway.registerRunner(member, "runner-resume-0001", { name: "Resume" });
    const first = await gateway.sessions.create(gateway.call(member), { title: "one" });
    const [{ id: lastSeen }] = (await gateway.sql`select max(id)::text as id from desktop_wake where member_id = ${member.memberId}`) as unknown as [
      { id: string },
    ];
    // While the stream is down, two more tasks arrive.
    await gateway.sessions.create(gateway.call(member), { title: "two" });
    await gateway.sessions.create(gateway.call(member), { title: "three" });
    const response = await fetch(`${gateway.baseUrl}/v1/desktop-runner/events`, {
      headers: { authorization: `Bearer ${token}`, "last-event-id": lastSeen },
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    await eventually(async () => {
      text += (await reader.read()).value ?? "";
      return (text.match(/event: remote_session_work_available/g) ?? []).length >= 2 ? true : undefined;
    }, 3_000);
    await reader.cancel();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(2);
    expect(ids.every((id) => id > Number(lastSeen))).toBe(true);
    expect(text).not.toContain(first.sessionId);
  });

  it("turns a lost lease into interrupted and keeps the events the runner posted", async () => {
    const member = newMember();
    const token = await gateway.registerRunner(member, "runner-dies-0001");
    const client = createRunnerClient({ baseUrl: gateway.baseUrl, token });
    const created = await gateway.sessions.create(gateway.call(member), { title: "crash", prompt: "work" });
    const [item] = (await client.work()).items;
    const assignment = await client.claim(item!.taskId);
    await client.postEvents(item!.taskId, assignment.attempt, [
      { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_dying" } },
      { sequence: 2, type: "assistant.delta", payload: { messageId: "m1", text: "half an answer" } },
    ]);
    const claimedAt = Date.now();
    // The desktop dies: no more heartbeats. Lease 3 s + sweep 0.2 s.
    const session = await eventually(async () => {
      const s = await ledgerFind(member, created.sessionId);
      return s.state === "interrupted" ? s : undefined;
    }, 8_000);
    expect(Date.now() - claimedAt).toBeLessThan(3_000 + 2_000);
    expect(session.lastError?.error).toBe("lease_lost");
    const read = await gateway.sessions.read(gateway.call(member), session, { limit: 20, waitMs: 0 });
    expect(read.state).toBe("interrupted");
    expect(read.lastError).toMatchObject({ error: "lease_lost" });
    expect(read.messages.map((m) => m.text)).toEqual([null, "half an answer"]);
    expect(await client.heartbeat(item!.taskId, assignment.attempt)).toMatchObject({ leaseValid: false });
    await expect(client.complete(item!.taskId, { attempt: 1, status: "done", localSessionId: "ses_dying" })).rejects.toMatchObject({ code: "lease_lost" });
  });

  it("stops a queued task at once and a running one through cancelRequested", async () => {
    const member = newMember();
    const call = gateway.call(member);
    const deliverBy = new Date(Date.now() + 60_000);
    await gateway.registerRunner(member, "runner-away-0001", { name: "Away" });
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '1 hour' where runner_id = 'runner-away-0001'`;
    const queued = await gateway.sessions.create(call, { title: "q", prompt: "p", runner: "Away", deliverBy: deliverBy.toISOString() });
    // A read of the queued session says what it waits for: that desktop, until deliverBy.
    expect((await gateway.sessions.read(call, await ledgerFind(member, queued.sessionId), { limit: 20, waitMs: 0 })).fields?.waitingFor).toEqual({
      runner: { runnerId: "runner-away-0001", name: "Away" },
      expiresAt: deliverBy.toISOString(),
    });
    expect(await gateway.sessions.stop(call, await ledgerFind(member, queued.sessionId))).toEqual({ sessionId: queued.sessionId, stopped: true });
    expect((await ledgerFind(member, queued.sessionId)).state).toBe("stopped");

    let aborted = "";
    await startDesktop(member, "runner-stoppable-01", {
      "remote_session.create": (_a, { signal, emit }) =>
        new Promise((_resolve, reject) => {
          emit({ type: "session.bound", payload: { localSessionId: "ses_long" } });
          signal.addEventListener("abort", () => {
            aborted = String((signal.reason as { reason?: string }).reason);
            reject(signal.reason);
          });
        }),
    });
    const running = await gateway.sessions.create(call, { title: "r", prompt: "long job" });
    await eventually(async () => ((await ledgerFind(member, running.sessionId)).targetSessionId ? true : undefined));
    expect(await gateway.sessions.stop(call, await ledgerFind(member, running.sessionId))).toEqual({ sessionId: running.sessionId, stopped: true });
    const stopped = await eventually(async () => {
      const s = await ledgerFind(member, running.sessionId);
      return s.state === "stopped" ? s : undefined;
    }, 5_000);
    expect(aborted).toBe("cancel_requested");
    expect(stopped.targetSessionId).toBe("ses_long");
    expect(await gateway.sessions.stop(call, stopped)).toEqual({ sessionId: running.sessionId, stopped: false });
  });

  it("keeps a follow-up sent during a running turn: the session is never idle while it waits", async () => {
    const { member, call, client, created, task: first, attempt } = await startedTurn("runner-followup-01", "ses_busy");
    const turn1 = { attempt };
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");

    // The follow-up arrives while turn 1 runs: still running, not refused and not dropped.
    await gateway.sessions.send(call, await ledgerFind(member, created.sessionId), { prompt: "second" });
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");
    const before = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 0 });

    // Turn 1 ends: the follow-up still waits for its desktop, so the session is queued, and a
    // read waiting on the caller's cursor does not return early as if all were done.
    await client.postEvents(first!.taskId, turn1.attempt, [{ sequence: 2, type: "assistant.final", payload: { messageId: "m1", text: "one" } }]);
    await client.complete(first!.taskId, { attempt: turn1.attempt, status: "done", localSessionId: "ses_busy" });
    expect((await ledgerFind(member, created.sessionId)).state).toBe("queued");
    const afterTurn1 = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { cursor: before.cursor, limit: 20, waitMs: 0 });
    expect(afterTurn1.state).toBe("queued");

    const [second] = (await client.work()).items;
    const turn2 = await client.claim(second!.taskId);
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");
    await client.complete(second!.taskId, { attempt: turn2.attempt, status: "done", localSessionId: "ses_busy" });
    expect((await ledgerFind(member, created.sessionId)).state).toBe("idle");
  });

  it("(protocol 3) leaves a session running when its turn's completion claims its follow-up, and refuses a revoked runner's completion whole", async () => {
    const { member, call, client, created, task: first, attempt } = await startedTurn("runner-chained-01", "ses_chained");
    await gateway.sessions.send(call, await ledgerFind(member, created.sessionId), { prompt: "second" });
    // The completion's move (queued: the follow-up waits) and the claim's (running) travel in one round trip, in this order.
    const answer = await client.complete(first!.taskId, { attempt, status: "done", localSessionId: "ses_chained", next: {} });
    expect(answer.next).toMatchObject({ kind: "remote_session.send", localSessionId: "ses_chained", attempt: 1 });
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");

    const revoked = await fetch(`${gateway.baseUrl}/v1/desktop-runner/runners/runner-chained-01`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${gateway.memberToken(member)}` },
    });
    expect(revoked.status).toBe(200);
    // Checked in the completion's own transaction: refused, and nothing of it is written.
    const events = [{ sequence: 1, type: "assistant.final" as const, payload: { messageId: "m2", text: "two" } }];
    const refused = await client
      .complete(answer.next!.taskId, { attempt: 1, status: "done", localSessionId: "ses_chained", events, next: {} })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 401, code: "runner_unauthorized" });
    const [task] = await gateway.sql`select state, completion from desktop_task where id = ${answer.next!.taskId}`;
    expect(task).toEqual({ state: "claimed", completion: null });
    expect(await gateway.sql`select 1 from desktop_task_event where task_id = ${answer.next!.taskId}`).toHaveLength(0);
    expect((await ledgerFind(member, created.sessionId)).state).toBe("running");
  });

  it("keeps a waiting read waiting through the caller's own prompt, and wakes it for the reply", async () => {
    const { member, call, client, created, task: item, attempt } = await startedTurn("runner-patient-01", "ses_patient");
    // The prompt is in the transcript now; it is the caller's, so the read waits it out.
    const started = Date.now();
    const first = await gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { limit: 20, waitMs: 600 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(first).toMatchObject({ state: "running", messages: [{ role: "user" }] });
    // The reply ends the next wait at once.
    const waiting = gateway.sessions.read(call, await ledgerFind(member, created.sessionId), { cursor: first.cursor, limit: 20, waitMs: 10_000 });
    const replyAt = Date.now();
    await client.postEvents(item!.taskId, attempt, [{ sequence: 2, type: "assistant.final", payload: { messageId: "m1", text: "answer" } }]);
    const second = await waiting;
    expect(Date.now() - replyAt).toBeLessThan(3_000);
    expect(second.messages.map((m) => m.text)).toEqual(["answer"]);
  });

  it("reports presence per machine", async () => {
    const member = newMember();
    await gateway.registerRunner(member, "runner-here-0001", { name: "Here" });
    await gateway.registerRunner(member, "runner-gone-0001", { name: "Gone" });
    await gateway.sql`update desktop_runner set last_seen_at = now() - interval '1 hour' where runner_id = 'runner-gone-0001'`;
    const availability = await gateway.target.availability(gateway.call(member));
    expect(availability.available).toBe(true);
    expect(availability.machines?.map((m) => [m.name, m.online])).toEqual([
      ["Here", true],
      ["Gone", false],
    ]);
    const response = await fetch(`${gateway.baseUrl}/v1/desktop-runner/presence`, { headers: { authorization: `Bearer ${gateway.memberToken(member)}` } });
    expect(await response.json()).toMatchObject({
      connected: true,
      desktops: [
        { name: "Here", online: true },
        { name: "Gone", online: false },
      ],
    });
  });
});
