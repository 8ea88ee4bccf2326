import { createCloudTarget, createHttpWorkerResolver, newOpencodeMessageId } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { createSessionLedger, type LedgerSession, migrate, newReferenceId, type ReadResult, SessionFailure, type Target } from "@openwork/remote-session-core";
import { type TargetSessions, targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

const db = useTestDatabase();
const member = { organizationId: "org_cloud", userId: "user_cloud", memberId: "mem_cloud" };
let opencode: RealOpencode;
let witness: RunningWitness;
let target: Target;
let sessions: TargetSessions;

beforeAll(async () => {
  // One real opencode for the file; nothing is sent to it before it printed "listening".
  opencode = await startRealOpencode();
  witness = await startWitnessWorker({
    clientToken: "client-token-123",
    hostToken: "host-token-123",
    gatewayKey: "gateway-key-123",
    opencode: { url: opencode.url, directory: opencode.directory },
  });
  await migrate(db.current.sql);
  target = createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-123" }),
    isCloudEnabled: async () => true,
    webUrlTemplate: "https://web.openwork.test/w/{workspaceId}/s/{sessionId}",
    readPollMs: 100,
  });
  sessions = targetSessions(target, createSessionLedger(db.current.sql));
}, 90_000);
afterAll(async () => {
  await witness?.close();
  await opencode?.stop();
});

const call = () => ({ ...member, referenceId: newReferenceId() });
const find = async (id: string) => (await createSessionLedger(db.current.sql).find(member, id)) as LedgerSession;
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error.error : error);

/** Reads until the turn settles (what an agent does with waitMs). */
async function readSettled(sessionId: string, cursor?: string): Promise<ReadResult> {
  for (let i = 0; i < 40; i++) {
    const read = await sessions.read(call(), await find(sessionId), { limit: 20, waitMs: 2_000, ...(cursor ? { cursor } : {}) });
    if (read.state !== "running") return read;
  }
  throw new Error("the turn did not settle");
}

describe("the cloud target against a real opencode behind the witness worker", () => {
  it("creates with a prompt, reads the reply, sends a follow-up and reads only the new turn", async () => {
    const created = await sessions.create(call(), { title: "Cloud chat", prompt: "hello cloud" });
    expect(created).toMatchObject({
      target: "cloud",
      state: "running",
      webUrl: expect.stringMatching(/^https:\/\/web\.openwork\.test\/w\/ws_witness\/s\/ses_/),
    });

    const first = await readSettled(created.sessionId);
    expect(first.state).toBe("idle");
    expect(first.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "hello cloud"],
      ["assistant", "FAKE_REPLY: hello cloud"],
    ]);
    expect(first.finalAssistantText).toBe("FAKE_REPLY: hello cloud");

    const sent = await sessions.send(call(), await find(created.sessionId), { prompt: "and again" });
    expect(sent).toMatchObject({ state: "accepted", alreadyPresent: false, messageId: expect.stringMatching(/^msg_[0-9a-f]{12}/) });
    const second = await readSettled(created.sessionId, first.cursor);
    expect(second.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "and again"],
      ["assistant", "FAKE_REPLY: and again"],
    ]);
    expect(second.messages[0]!.id).toBe(sent.messageId);
    expect(second.finalAssistantText).toBe("FAKE_REPLY: and again");

    // Nothing new after the end: an old reply is never reported as the new one.
    const none = await sessions.read(call(), await find(created.sessionId), { cursor: second.cursor, limit: 20, waitMs: 300 });
    expect(none.messages).toEqual([]);
    expect(none.finalAssistantText).toBeUndefined();
  });

  it("shows a session it created in the worker's native session list, where OpenWork Web looks", async () => {
    const created = await sessions.create(call(), { title: "Seen on the web" });
    const remoteId = (await find(created.sessionId)).targetSessionId!;
    const headers = { authorization: "Bearer client-token-123" };
    const listed = (await (await fetch(`${witness.url}/workspace/ws_witness/sessions`, { headers })).json()) as { items: { id: string; title: string }[] };
    expect(listed.items).toContainEqual(expect.objectContaining({ id: remoteId, title: "Seen on the web" }));
    const snapshot = (await (await fetch(`${witness.url}/workspace/ws_witness/sessions/${remoteId}/snapshot`, { headers })).json()) as {
      item: { session: { id: string }; status: { type: string }; todos: unknown[] };
    };
    expect(snapshot.item).toMatchObject({ session: { id: remoteId }, status: { type: "idle" }, todos: [] });
  });

  it("does not send a prompt twice when a send is retried with its message id", async () => {
    const created = await sessions.create(call(), { title: "Retry" });
    expect(created.state).toBe("idle");
    const messageId = newOpencodeMessageId();
    const first = await sessions.send(call(), await find(created.sessionId), { prompt: "only once", messageId });
    const retry = await sessions.send(call(), await find(created.sessionId), { prompt: "only once", messageId });
    expect(first.alreadyPresent).toBe(false);
    expect(retry).toMatchObject({ messageId, alreadyPresent: true });
    const read = await readSettled(created.sessionId);
    expect(read.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("stops a slow turn", async () => {
    const created = await sessions.create(call(), { title: "Slow", prompt: "SLOW please take your time" });
    // Wait until the reply is being written: its text so far is visible before the turn ends.
    let partialText: string | undefined;
    for (let i = 0; i < 50 && !partialText; i++) {
      partialText = (await sessions.read(call(), await find(created.sessionId), { limit: 20, waitMs: 200 })).partialText;
    }
    expect(partialText).toMatch(/^FAKE_REPLY: /);
    expect(await sessions.stop(call(), await find(created.sessionId))).toEqual({ sessionId: created.sessionId, stopped: true });
    const read = await readSettled(created.sessionId);
    expect(read.state).toBe("stopped");
    expect(read.lastError).toMatchObject({ error: "MessageAbortedError" });
    expect(read.messages.at(-1)?.role).toBe("assistant");
  });

  it("answers unknown_session for a session deleted on the worker", async () => {
    const created = await sessions.create(call(), { title: "Doomed" });
    const session = await find(created.sessionId);
    await fetch(`${opencode.url}/session/${session.targetSessionId}`, { method: "DELETE", headers: { "x-opencode-directory": opencode.directory } });
    expect(await sessions.read(call(), session, { limit: 5, waitMs: 0 }).catch(codeOf)).toBe("unknown_session");
    expect(await sessions.send(call(), session, { prompt: "hello?" }).catch(codeOf)).toBe("unknown_session");
  });

  it("guards the worker with its client token only, as openwork-server does, and knows only its workspace", async () => {
    expect((await fetch(`${witness.url}/workspaces`)).status).toBe(401);
    expect((await fetch(`${witness.url}/workspaces`, { headers: { authorization: "Bearer wrong-token" } })).status).toBe(401);
    // The owner-level host token is neither needed nor sent by the gateway (least privilege).
    const headers = { authorization: "Bearer client-token-123" };
    expect((await fetch(`${witness.url}/workspaces`, { headers })).status).toBe(200);
    expect((await fetch(`${witness.url}/workspace/ws_other/opencode/session/status`, { headers })).status).toBe(404);
    expect((await fetch(`${witness.url}/workspace/ws_witness/opencode/session/status`, { headers })).status).toBe(200);
    expect((await fetch(`${witness.url}/w/ws_witness/opencode/session/status`, { headers: { authorization: "bearer client-token-123" } })).status).toBe(200);
  });

  it("passes opencode's own refusals through (a message id must start with msg)", async () => {
    const created = await sessions.create(call(), { title: "ids" });
    const remoteId = (await find(created.sessionId)).targetSessionId!;
    const response = await fetch(`${witness.url}/workspace/ws_witness/opencode/session/${remoteId}/prompt_async`, {
      method: "POST",
      headers: { authorization: "Bearer client-token-123", "content-type": "application/json" },
      body: JSON.stringify({ parts: [{ type: "text", text: "x" }], messageID: "abc_1" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ name: "BadRequest", data: { message: expect.stringContaining('starting with "msg"') } });
  });

  it("answers cloud_runtime_unreachable while the worker's engine is down", async () => {
    const created = await sessions.create(call(), { title: "engine" });
    witness.setEngineDown(true);
    try {
      const failure = await sessions
        .read(call(), await find(created.sessionId), { limit: 5, waitMs: 0 })
        .catch((error: unknown) => (SessionFailure.isInstance(error) ? error.error : error));
      expect(failure).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true, message: expect.stringContaining("500 internal_error") });
    } finally {
      witness.setEngineDown(false);
    }
    expect((await sessions.read(call(), await find(created.sessionId), { limit: 5, waitMs: 0 })).state).toBe("idle");
  });
});
