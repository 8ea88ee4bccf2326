import { createCloudTarget, createHttpWorkerResolver } from "@openwork/cloud-target";
import { createRemoteSessions, createSessionLedger, type LedgerSession, migrate, newReferenceId } from "@openwork/remote-session-core";
import { type EmbeddedServer, killableClient, ProcessKilled, startEmbeddedPostgres } from "@openwork/test-postgres";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

// PostgreSQL goes down between the worker taking a create's prompt and the gateway recording it
// (a server of this file's own), then the client retries with the same key: one session, and
// the worker receives the prompt once.
let server: EmbeddedServer;
let sql: Sql;
let witness: RunningWitness;
let members = 0;
/** Armed by a test: the next accepted prompt stops PostgreSQL until `outage.end()`. */
let outage: { begun: Promise<void>; end: () => void; restarted?: Promise<void>; start: () => void } | null = null;

const connect = () => postgres(server.url, { max: 4, onnotice: () => {}, connect_timeout: 5 });

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  sql = connect();
  await migrate(sql);
  witness = await startWitnessWorker({
    clientToken: "client-token-outage",
    hostToken: "host-token-outage",
    gatewayKey: "gateway-key-outage",
    echo: { replyDelayMs: 50 },
  });
}, 60_000);
afterAll(async () => {
  await witness?.close();
  await sql?.end({ timeout: 5 });
  await server?.stop();
});

/** Stops PostgreSQL once the worker has answered a prompt, before the gateway hears the answer. */
const fetchWithOutage: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const url = input instanceof Request ? input.url : String(input);
  if (outage && url.endsWith("/prompt_async") && response.status === 204) {
    const armed = outage;
    outage = null;
    armed.start();
    await armed.begun;
  }
  return response;
};

function armOutage() {
  let down!: () => void;
  let up!: () => void;
  const begun = new Promise<void>((resolve) => (down = resolve));
  const ended = new Promise<void>((resolve) => (up = resolve));
  const armed = {
    begun,
    end: () => up(),
    start: () => {
      armed.restarted = server.restart({ whileStopped: async () => (down(), await ended) });
    },
  } as NonNullable<typeof outage>;
  outage = armed;
  return armed;
}

const target = () =>
  createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-outage" }),
    isCloudEnabled: async () => true,
    fetch: fetchWithOutage,
    readPollMs: 50,
  });

/** A gateway process over the file's database. */
const gatewayProcess = () => {
  const ledger = createSessionLedger(sql);
  return { ledger, target: target(), sessions: createRemoteSessions(ledger) };
};

describe("a cloud create whose database went away after the worker took the prompt", () => {
  it("converges on one session when retried with the same key, and the worker gets the prompt once", async () => {
    const member = { organizationId: "org_outage", userId: `user_outage_${++members}`, memberId: `mem_outage_${members}` };
    const call = () => ({ ...member, referenceId: newReferenceId() });
    const input = { title: "Outage", prompt: "only once please", extra: {} };
    const armed = armOutage();

    const first = gatewayProcess();
    const failed = await first.sessions.create(call(), first.target, input, { idempotencyKey: "outage-key" }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).not.toBeNull();
    armed.end();
    await armed.restarted;
    expect(witness.receivedPrompts()).toHaveLength(1);
    // The rest runs in another gateway process, with connections of its own.
    await sql.end({ timeout: 5 });
    sql = connect();

    // Meanwhile the row the failed attempt left is what list shows and what read and stop act on.
    const later = gatewayProcess();
    const { sessions: listed } = await later.ledger.list(member, { limit: 10 });
    expect(listed).toHaveLength(1);
    const read = await later.sessions.read(call(), later.target, listed[0]!, { limit: 20, waitMs: 3_000, from: "start" });
    expect(read.messages.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["only once please"]);
    expect((await later.ledger.find(member, listed[0]!.id))?.state).toBe(read.state);
    // And stop reaches the worker's session (its turn is over: nothing to stop), never unknown_session.
    expect(await later.sessions.stop(call(), later.target, (await later.ledger.find(member, listed[0]!.id))!)).toEqual({
      sessionId: listed[0]!.id,
      stopped: false,
    });

    // The dead attempt's claim is taken over after 120 s: as if they had passed.
    await sql`update remote_session_idempotency set claimed_at = claimed_at - interval '3 minutes' where user_id = ${member.userId}`;
    const retried = await later.sessions.create(call(), later.target, input, { idempotencyKey: "outage-key" });
    expect(retried.sessionId).toBe(listed[0]!.id);
    expect((await later.ledger.list(member, { limit: 10 })).sessions.map((s) => s.id)).toEqual([retried.sessionId]);
    const session = (await later.ledger.find(member, retried.sessionId)) as LedgerSession;
    expect(witness.receivedPrompts().map((p) => [p.sessionID, p.messageID])).toEqual([[session.targetSessionId, session.targetRef.createPromptId]]);
  });
});

describe("an idempotent cloud create killed after every statement and worker request", () => {
  /** A gateway process killed once it has sent `lives` statements and requests to the worker (its event stream aside). */
  const killedProcess = (lives: number) => {
    const dying = killableClient(sql, lives);
    const ledger = createSessionLedger(dying.sql);
    const target = createCloudTarget({
      resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-outage" }),
      isCloudEnabled: async () => true,
      fetch: async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (!url.endsWith("/event")) dying.step();
        return fetch(input, init);
      },
    });
    return {
      dying,
      run: (call: ReturnType<typeof callOf>, key: string) =>
        createRemoteSessions(ledger).create(call, target, createInput, { idempotencyKey: key, admit: () => ledger.takeRateLimit(call) }),
    };
  };
  const createInput = { title: "Killed", prompt: "exactly once", extra: {} };
  const callOf = (member: { organizationId: string; userId: string; memberId: string }) => ({ ...member, referenceId: newReferenceId() });
  const newMember = () => ({ organizationId: "org_outage", userId: `user_outage_${++members}`, memberId: `mem_outage_${members}` });

  it("converges on one session whose worker session got the prompt once, wherever the process died", async () => {
    const whole = killedProcess(Number.POSITIVE_INFINITY);
    await whole.run(callOf(newMember()), "whole");
    const steps = whole.dying.sent();
    expect(steps).toBeGreaterThan(8);
    const live = gatewayProcess();
    for (let lives = 0; lives < steps; lives++) {
      const member = newMember();
      const dying = killedProcess(lives);
      // Killed at a worker request, the attempt fails with the target's own error (its fetch
      // threw), and the mark that frees its key is left to the dead client: the process died all the same.
      const killed = await dying.run(callOf(member), "killed-key").then(
        () => "finished",
        (error: unknown) => (error instanceof ProcessKilled || dying.dying.sent() >= lives ? "killed" : error),
      );
      expect(killed, `killed after ${lives}`).toBe("killed");
      await sql`update remote_session_idempotency set claimed_at = claimed_at - interval '3 minutes' where user_id = ${member.userId}`;
      const retried = await live.sessions.create(callOf(member), live.target, createInput, { idempotencyKey: "killed-key" });
      const { sessions } = await live.ledger.list(member, { limit: 10 });
      expect(
        sessions.map((s) => s.id),
        `killed after ${lives}`,
      ).toEqual([retried.sessionId]);
      const session = sessions[0]!;
      const prompts = witness.receivedPrompts().filter((p) => p.messageID === session.targetRef.createPromptId);
      expect(
        prompts.map((p) => p.sessionID),
        `killed after ${lives}`,
      ).toEqual([session.targetSessionId]);
      const read = await live.sessions.read(callOf(member), live.target, session, { limit: 20, waitMs: 3_000, from: "start" });
      expect(
        read.messages.filter((m) => m.role === "user").map((m) => m.text),
        `killed after ${lives}`,
      ).toEqual(["exactly once"]);
    }
  }, 120_000);
});

describe("a cloud follow-up with a model", () => {
  it("goes to the worker with that model", async () => {
    const member = { organizationId: "org_outage", userId: `user_outage_${++members}`, memberId: `mem_outage_${members}` };
    const call = () => ({ ...member, referenceId: newReferenceId() });
    const gateway = gatewayProcess();
    expect(gateway.target.sendTakesModel).toBe(true);
    const created = await gateway.sessions.create(call(), gateway.target, { title: "Models", extra: {} });
    const session = (await gateway.ledger.find(member, created.sessionId)) as LedgerSession;
    const sent = await gateway.sessions.send(call(), gateway.target, session, { prompt: "with a model", model: { providerId: "openai", modelId: "gpt-test" } });
    const received = witness.receivedPrompts().find((p) => p.messageID === sent.messageId);
    expect(received).toEqual({ sessionID: session.targetSessionId, messageID: sent.messageId, model: { providerID: "openai", modelID: "gpt-test" } });
  });
});
