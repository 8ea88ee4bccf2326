import { createHash } from "node:crypto";
import { createSessionLedger } from "@openwork/remote-session-core";
import {
  ClaimRequestSchema,
  CompleteRequestSchema,
  HeartbeatRequestSchema,
  PostEventsRequestSchema,
  RUNNER_ERROR_CODES,
  TokenMintRequestSchema,
} from "@openwork/runner-protocol/internal";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { mintRunnerToken } from "@openwork/runner-protocol/server";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { SECRET, type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
const alice = { organizationId: "org_sec", memberId: "mem_alice" };
const bob = { organizationId: "org_sec", memberId: "mem_bob" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
});
afterAll(async () => {
  await gateway.close();
});

const url = (path: string) => `${gateway.baseUrl}/v1/desktop-runner${path}`;
// In process (the routes' fetch, no socket): these tests are about answers, not the transport.
const call = (path: string, token: string, init: { method?: string; body?: string } = {}) =>
  gateway.request(`/v1/desktop-runner${path}`, {
    method: init.method ?? "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(init.body === undefined ? {} : { body: init.body }),
  });

async function claimedTask(member: typeof alice, runnerId: string) {
  const token = await gateway.registerRunner(member, runnerId);
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token });
  const created = await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p", runner: runnerId });
  const [task] = await gateway.sql<{ id: string }[]>`select id from desktop_task where session_id = ${created.sessionId}`;
  const assignment = await client.claim(task!.id);
  return { token, client, taskId: task!.id, attempt: assignment.attempt };
}

async function databaseFingerprint(): Promise<string> {
  const rows = await gateway.sql`
    select (select coalesce(jsonb_agg(t order by t.id), '[]'::jsonb) from desktop_task t) as tasks,
           (select count(*) from desktop_task_event) as events,
           (select coalesce(jsonb_agg(s order by s.id), '[]'::jsonb) from remote_session s) as sessions,
           (select coalesce(jsonb_agg(r.runner_id order by r.runner_id), '[]'::jsonb) from desktop_runner r) as runners`;
  return createHash("sha256").update(JSON.stringify(rows)).digest("hex");
}

const taskRoutes = (taskId: string) => ["claim", "heartbeat", "events", "complete"].map((action) => `/tasks/${taskId}/${action}`);

describe("runner route security", () => {
  it("answers 404 on every task route for another member's task and for another runner's task", async () => {
    const bobs = await claimedTask(bob, "runner-bob-0001");
    const aliceToken = await gateway.registerRunner(alice, "runner-alice-0001");
    const otherBobToken = await gateway.registerRunner(bob, "runner-bob-0002");
    for (const token of [aliceToken, otherBobToken]) {
      for (const path of taskRoutes(bobs.taskId)) {
        const response = await call(path, token, { body: JSON.stringify(path.endsWith("claim") ? {} : { attempt: 1, status: "done", localSessionId: "x" }) });
        // Bodies that are wrong for the route still must not reveal the task: 404 or 400, never 409/200.
        expect([400, 404], path).toContain(response.status);
      }
      const client = createRunnerClient({ baseUrl: gateway.baseUrl, token });
      await expect(client.claim(bobs.taskId)).rejects.toMatchObject({ status: 404 });
      await expect(client.heartbeat(bobs.taskId, 1)).rejects.toMatchObject({ status: 404 });
      await expect(client.postEvents(bobs.taskId, 1, [{ sequence: 1, type: "status", payload: { status: "running" } }])).rejects.toMatchObject({ status: 404 });
      await expect(client.complete(bobs.taskId, { attempt: 1, status: "done", localSessionId: "x" })).rejects.toMatchObject({ status: 404 });
      expect((await client.work()).items.map((i) => i.taskId)).not.toContain(bobs.taskId);
    }
  });

  it("refuses tampered, expired and wrong-audience tokens with 401 on every runner route", async () => {
    const { token, taskId } = await claimedTask(alice, "runner-alice-0002");
    const [payload, signature] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const tampered = `${Buffer.from(JSON.stringify({ ...claims, m: "mem_bob" })).toString("base64url")}.${signature}`;
    const base = {
      secret: SECRET,
      organizationId: alice.organizationId,
      memberId: alice.memberId,
      runnerId: "runner-alice-0002",
      capabilities: claims.c as [],
    };
    const expired = mintRunnerToken({ ...base, audience: gateway.baseUrl, now: Date.now() - 13 * 3600_000 }).token;
    const elsewhere = mintRunnerToken({ ...base, audience: "https://other-gateway.example.test" }).token;
    const memberSession = gateway.memberToken(alice);
    for (const bad of [tampered, expired, elsewhere, memberSession, ""]) {
      for (const [method, path] of [["GET", "/work"], ["GET", "/events"], ...taskRoutes(taskId).map((p) => ["POST", p])] as const) {
        const response = await call(path, bad, { method, ...(method === "POST" ? { body: "{}" } : {}) });
        expect(response.status, `${path} with a bad token`).toBe(401);
        expect(response.headers.get("www-authenticate")).toContain("Bearer");
        expect(await response.json()).toMatchObject({ error: "runner_unauthorized" });
      }
    }
    // And a runner token is no member credential: it cannot mint more runner tokens.
    const mint = await call("/token", token, {
      body: JSON.stringify({ runnerId: "runner-x-0001", name: "x", platform: "linux", appVersion: "1", protocolVersion: 1 }),
    });
    expect(mint.status).toBe(401);
  });

  it("scopes runner ids to their owner: another member's registration of the same id is a fresh runner of theirs", async () => {
    const aliceToken = await gateway.registerRunner(alice, "runner-shared-0001", { name: "Alice's Mac" });
    // Bob picks the same id: answered exactly as a fresh id, and it changes nothing of Alice's.
    const bobToken = await gateway.registerRunner(bob, "runner-shared-0001", { name: "Bob's box" });
    expect(bobToken).not.toBe(aliceToken);
    const presence = async (member: typeof alice) =>
      (await gateway.target.availability(gateway.call(member))).machines?.filter((m) => m.runnerId === "runner-shared-0001").map((m) => m.name);
    expect(await presence(alice)).toEqual(["Alice's Mac"]);
    expect(await presence(bob)).toEqual(["Bob's box"]);
    // Alice's work never reaches Bob's runner of the same id.
    await gateway.sessions.create(gateway.call(alice), { title: "t", prompt: "p", runner: "runner-shared-0001" });
    expect((await createRunnerClient({ baseUrl: gateway.baseUrl, token: bobToken }).work()).items).toEqual([]);
    expect((await createRunnerClient({ baseUrl: gateway.baseUrl, token: aliceToken }).work()).items).toHaveLength(1);
  });

  it("lets the owner list, rename and revoke a desktop: its token is refused, its stream closes, its waiting work fails fast", async () => {
    const dave = { organizationId: "org_sec", memberId: "mem_dave" };
    const token = await gateway.registerRunner(dave, "runner-dave-0001", { name: "Old name" });
    const member = (method: string, path: string, body?: unknown, as = dave) =>
      fetch(url(path), {
        method,
        headers: { authorization: `Bearer ${gateway.memberToken(as)}`, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await (await member("PATCH", "/runners/runner-dave-0001", { name: "Dave's laptop" })).json()) as unknown).toEqual({
      runner: { runnerId: "runner-dave-0001", name: "Dave's laptop" },
    });
    expect(await (await member("GET", "/runners")).json()).toMatchObject({ runners: [{ runnerId: "runner-dave-0001", name: "Dave's laptop", online: true }] });
    // Another member cannot touch it: exactly as for an id that does not exist.
    expect((await member("DELETE", "/runners/runner-dave-0001", undefined, bob)).status).toBe(404);
    expect((await member("PATCH", "/runners/runner-dave-0001", { name: "x" }, bob)).status).toBe(404);

    const waiting = await gateway.sessions.create(gateway.call(dave), {
      title: "t",
      prompt: "p",
      runner: "runner-dave-0001",
      deliverBy: new Date(Date.now() + 60_000).toISOString(),
    });
    const stream = await call("/events", token, { method: "GET" });
    const reader = stream.body!.getReader();
    await reader.read();
    const revoked = await member("DELETE", "/runners/runner-dave-0001");
    expect(await revoked.json()).toEqual({ revoked: true, failedTasks: 1 });
    expect((await call("/work", token, { method: "GET" })).status).toBe(401);
    // Its stream closes at once: the revoke hint reaches the process holding it.
    const started = Date.now();
    expect(await eventually(async () => ((await reader.read()).done ? true : undefined), 5_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    const session = await createSessionLedger(gateway.sql).find(gateway.call(dave), waiting.sessionId);
    expect(session).toMatchObject({ state: "failed", lastError: { error: "runner_revoked" } });
    expect(await (await member("GET", "/runners")).json()).toEqual({ runners: [] });
  });

  it("keeps a revoked desktop revoked through its own mints until the owner re-enables it, and its tokens from before dead for good", async () => {
    const erin = { organizationId: "org_sec", memberId: "mem_erin" };
    const member = (method: string, path: string, as = erin) => fetch(url(path), { method, headers: { authorization: `Bearer ${gateway.memberToken(as)}` } });
    const before = await gateway.registerRunner(erin, "runner-erin-0001");
    expect((await member("DELETE", "/runners/runner-erin-0001")).status).toBe(200);
    // The desktop mints again by itself, as the reference runner does: refused, with the person's step.
    await expect(gateway.registerRunner(erin, "runner-erin-0001")).rejects.toMatchObject({
      status: 403,
      code: "runner_revoked",
      message: expect.stringMatching(/re-enables it/),
    });
    expect((await call("/work", before, { method: "GET" })).status).toBe(401);
    // Nothing can be pinned to it meanwhile.
    await expect(gateway.sessions.create(gateway.call(erin), { title: "t", prompt: "p", runner: "runner-erin-0001" })).rejects.toMatchObject({
      error: { error: "unknown_computer" },
    });
    // Only its owner re-enables it; to anyone else it does not exist.
    expect((await member("POST", "/runners/runner-erin-0001/enable", bob)).status).toBe(404);
    expect(await (await member("POST", "/runners/runner-erin-0001/enable")).json()).toEqual({ runner: { runnerId: "runner-erin-0001", revoked: false } });
    // The token minted before the revocation stays dead; a new mint works.
    expect((await call("/work", before, { method: "GET" })).status).toBe(401);
    const after = await gateway.registerRunner(erin, "runner-erin-0001");
    expect((await call("/work", after, { method: "GET" })).status).toBe(200);
    expect((await call("/work", before, { method: "GET" })).status).toBe(401);
  });

  it("shuts a removed member's runner out, and closes its open stream", async () => {
    const carol = { organizationId: "org_sec", memberId: "mem_carol" };
    const token = await gateway.registerRunner(carol, "runner-carol-0001");
    const stream = await call("/events", token, { method: "GET" });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read();
    gateway.removeMember(carol);
    const ended = await eventually(async () => ((await reader.read()).done ? true : undefined), 3_000);
    expect(ended).toBe(true);
    const work = await call("/work", token, { method: "GET" });
    expect(work.status).toBe(403);
    expect(await work.json()).toMatchObject({ error: "membership_required" });
  });

  it("answers 6 000 generated bad bodies across the routes with a typed 4xx and changes nothing", async () => {
    const { token, taskId } = await claimedTask(alice, "runner-alice-0003");
    const routes: [string, string, z.ZodType][] = [
      ["/token", gateway.memberToken(alice), TokenMintRequestSchema],
      [`/tasks/${taskId}/claim`, token, ClaimRequestSchema],
      [`/tasks/${taskId}/heartbeat`, token, HeartbeatRequestSchema],
      [`/tasks/${taskId}/events`, token, PostEventsRequestSchema],
      [`/tasks/${taskId}/complete`, token, CompleteRequestSchema],
    ];
    const event = fc.record({
      sequence: fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constant(1)),
      type: fc.constantFrom("status", "assistant.delta", "terminal", "nope"),
      payload: fc.oneof(fc.constant({ status: "running" }), fc.object(), fc.anything()),
    });
    const body = fc.oneof(
      fc.anything().map((v) => JSON.stringify(v) ?? "null"),
      fc.string(),
      fc
        .record(
          { attempt: fc.oneof(fc.integer(), fc.string(), fc.constant(1)), status: fc.constantFrom("done", "failed", "cancelled", "x"), extra: fc.anything() },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      fc.record({ attempt: fc.constant(1), events: fc.array(event, { maxLength: 3 }) }).map((v) => JSON.stringify(v)),
      fc
        .record({ runnerId: fc.string(), name: fc.string({ maxLength: 200 }), platform: fc.string(), protocolVersion: fc.anything() }, { requiredKeys: [] })
        .map((v) => JSON.stringify(v)),
    );
    const before = await databaseFingerprint();
    for (const [path, credential, schema] of routes) {
      await fc.assert(
        fc.asyncProperty(body, async (text) => {
          // The routes read an empty body as {} (a claim has none); skip bodies that are valid.
          let parsed: unknown;
          try {
            parsed = text.trim() === "" ? {} : JSON.parse(text);
          } catch {
            parsed = Symbol("not json");
          }
          fc.pre(!schema.safeParse(parsed).success);
          const response = await call(path, credential, { body: text });
          expect(response.status, `${path} ${text.slice(0, 80)}`).toBeGreaterThanOrEqual(400);
          expect(response.status, `${path} ${text.slice(0, 80)}`).toBeLessThan(500);
          const answer = (await response.json()) as { error: string };
          expect(RUNNER_ERROR_CODES).toContain(answer.error);
        }),
        { numRuns: 1_200 },
      );
    }
    expect(await databaseFingerprint()).toBe(before);
    // About 7 s alone on two cores; the margin is for a machine busy with other suites.
  }, 60_000);
});
