import { createCloudTarget, createHttpWorkerResolver, createWorkerEvents } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { createSessionLedger, type LedgerSession, migrate, newReferenceId, type ReadResult, recordObservedStates } from "@openwork/remote-session-core";
import { targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

// How a turn ends, read through the cloud target: on the echo engine (which reproduces what
// opencode does) and on a real opencode behind the witness. `reply` is each engine's answer prefix.
const db = useTestDatabase();
beforeAll(() => migrate(db.current.sql));

const engines = [
  { name: "echo engine", reply: "echo: ", retryMessage: "echo provider is down", real: false },
  { name: "real opencode", reply: "FAKE_REPLY: ", retryMessage: "fake provider is down", real: true },
] as const;

describe.each(engines)("cloud turns on the $name", ({ reply, retryMessage, real }) => {
  let opencode: RealOpencode | undefined;
  let witness: RunningWitness;
  let members = 0;
  const member = () => ({ organizationId: "org_turns", userId: `user_turns_${++members}`, memberId: `mem_turns_${members}` });

  beforeAll(async () => {
    opencode = real ? await startRealOpencode() : undefined;
    witness = await startWitnessWorker({
      clientToken: "client-token-turns",
      hostToken: "host-token-turns",
      gatewayKey: "gateway-key-turns",
      echo: { replyDelayMs: 100, retryMs: 500 },
      ...(opencode ? { opencode: { url: opencode.url, directory: opencode.directory } } : {}),
    });
  }, 90_000);
  const processes: { events: ReturnType<typeof createWorkerEvents> }[] = [];
  afterEach(() => {
    for (const process of processes.splice(0)) process.events.close();
  });
  afterAll(async () => {
    await witness?.close();
    await opencode?.stop();
  });

  /** A gateway process: its own target, event streams and ledger view. */
  const gatewayProcess = (options: { turnStartGraceMs?: number; recordsTurns?: boolean; lingerMs?: number } = {}) => {
    const { recordsTurns, lingerMs = 500, ...timing } = options;
    const events = createWorkerEvents({ lingerMs });
    const ledger = createSessionLedger(db.current.sql);
    const target = createCloudTarget({
      resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-turns" }),
      isCloudEnabled: async () => true,
      events,
      ...(recordsTurns ? { onObserved: recordObservedStates(ledger) } : {}),
      ...timing,
    });
    processes.push({ events });
    return { events, sessions: targetSessions(target, ledger), ledger };
  };

  /** Kills the engine mid-reply and starts it again, its stored sessions kept. */
  const restartEngine = async (signal: "SIGKILL" | "SIGTERM") => {
    if (opencode) return opencode.restart(signal);
    witness.setEngineDown(true);
    witness.setEngineDown(false);
  };
  const START_MISSING = /^\[the start of this reply is missing here[^\]]*\] …/;

  const readOf = async (
    gateway: ReturnType<typeof gatewayProcess>,
    who: ReturnType<typeof member>,
    sessionId: string,
    input: { waitMs: number; cursor?: string },
  ) => gateway.sessions.read({ ...who, referenceId: newReferenceId() }, (await gateway.ledger.find(who, sessionId)) as LedgerSession, { limit: 20, ...input });

  it("reports a turn that fails before any reply as failed, with the engine's reason, at once", async () => {
    const gateway = gatewayProcess();
    const who = member();
    const call = { ...who, referenceId: newReferenceId() };
    const created = await gateway.sessions.create(call, { title: "bad model", prompt: "hello", model: { providerId: "nobody", modelId: "nope" } });
    const started = Date.now();
    // "At once": on the failure, well before the wait's end (a loaded machine's real engine may
    // take a few seconds to refuse the model; the wait it must not sit out is 20 s).
    const read = await readOf(gateway, who, created.sessionId, { waitMs: 20_000 });
    expect(read.state).toBe("failed");
    expect(read.lastError).toEqual({ error: "model_unavailable", message: "Model not found: nobody/nope." });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(read.messages.map((m) => m.role)).toEqual(["user"]);
    // Another gateway process, which never heard the event, keeps what was recorded.
    expect(await readOf(gatewayProcess(), who, created.sessionId, { waitMs: 0 })).toMatchObject({ state: "failed", lastError: { error: "model_unavailable" } });
    expect((await gateway.ledger.find(who, created.sessionId))?.state).toBe("failed");
  });

  it("records a follow-up's end with nobody reading it, after an idle turn, within moments of its reply", async () => {
    const gateway = gatewayProcess({ recordsTurns: true });
    const who = member();
    const call = () => ({ ...who, referenceId: newReferenceId() });
    const stateOf = async (sessionId: string) => (await gateway.ledger.find(who, sessionId))?.state;
    const idleWithin = async (sessionId: string, ms: number) => {
      for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        if ((await stateOf(sessionId)) === "idle") return true;
      }
      return false;
    };
    const created = await gateway.sessions.create(call(), { title: "follow-ups", prompt: "first" });
    expect(await idleWithin(created.sessionId, 20_000)).toBe(true);
    for (const prompt of ["second", "third"]) {
      await gateway.sessions.send(call(), (await gateway.ledger.find(who, created.sessionId)) as LedgerSession, { prompt });
      // Idle, not left running until someone reads: the follower saw idle and the row was idle before the send.
      expect(await idleWithin(created.sessionId, 10_000)).toBe(true);
    }
  });

  it("does not read an unanswered prompt as running forever when nobody heard why", async () => {
    const who = member();
    const sender = gatewayProcess();
    const created = await sender.sessions.create(
      { ...who, referenceId: newReferenceId() },
      { title: "bad model", prompt: "hello", model: { providerId: "nobody", modelId: "nope" } },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // A process that was not listening, with a short grace: failed, without the reason it never heard.
    const stranger = gatewayProcess({ turnStartGraceMs: 400 });
    const started = Date.now();
    const read = await readOf(stranger, who, created.sessionId, { waitMs: 5_000 });
    expect(read).toMatchObject({ state: "failed", lastError: { error: "turn_failed", message: expect.stringContaining("without a reply") } });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("shows live text while the reply is written, before the turn ends", async () => {
    const gateway = gatewayProcess();
    const who = member();
    const created = await gateway.sessions.create({ ...who, referenceId: newReferenceId() }, { title: "slow", prompt: "SLOW words please" });
    let read: ReadResult | undefined;
    for (let i = 0; i < 40 && !read?.partialText?.includes("words"); i++) read = await readOf(gateway, who, created.sessionId, { waitMs: 400 });
    expect(read?.state).toBe("running");
    expect(read?.partialText).toMatch(new RegExp(`^${reply}SLOW words`));
    // A waiting read that ends at its deadline carries the text so far, grown since.
    const later = await readOf(gateway, who, created.sessionId, { waitMs: 700 });
    expect(later.partialText!.length).toBeGreaterThan(read!.partialText!.length);
    await gateway.sessions.stop({ ...who, referenceId: newReferenceId() }, (await gateway.ledger.find(who, created.sessionId)) as LedgerSession);
  });

  it("shows a provider being retried, and stops it", async () => {
    const gateway = gatewayProcess();
    const who = member();
    const created = await gateway.sessions.create({ ...who, referenceId: newReferenceId() }, { title: "retry", prompt: "FAIL500 please" });
    let read: ReadResult | undefined;
    for (let i = 0; i < 20 && !read?.fields?.retrying; i++) read = await readOf(gateway, who, created.sessionId, { waitMs: 500 });
    expect(read).toMatchObject({ state: "running", fields: { retrying: { attempt: expect.any(Number), message: retryMessage } } });
    const stop = await gateway.sessions.stop({ ...who, referenceId: newReferenceId() }, (await gateway.ledger.find(who, created.sessionId)) as LedgerSession);
    expect(stop).toEqual({ sessionId: created.sessionId, stopped: true });
    const after = await readOf(gateway, who, created.sessionId, { waitMs: 3_000 });
    expect(after.state).toBe("stopped");
    expect(after.fields?.retrying).toBeUndefined();
  });

  it("waits on a permission and a question, and goes on once answered (the same on both engines)", async () => {
    const gateway = gatewayProcess();
    const who = member();
    const call = () => ({ ...who, referenceId: newReferenceId() });
    const session = async (id: string) => (await gateway.ledger.find(who, id)) as LedgerSession;
    /** Reads on from `cursor` (each read returns with what is new) until the session is in `state`. */
    const readUntil = async (id: string, state: string, cursor?: string) => {
      let text: string | undefined;
      for (let i = 0; i < 20; i++) {
        const read = await readOf(gateway, who, id, { waitMs: 2_000, ...(cursor ? { cursor } : {}) });
        cursor = read.cursor;
        text = read.finalAssistantText ?? text;
        if (read.state === state) return { ...read, finalAssistantText: text };
      }
      throw new Error(`never reached ${state}`);
    };
    const bash = await gateway.sessions.create(call(), { title: "bash", prompt: "RUNBASH please" });
    const asked = await readUntil(bash.sessionId, "waiting_input");
    expect(asked.pending).toMatchObject({
      kind: "permission",
      id: expect.stringMatching(/^per_/),
      title: "bash",
      detail: "echo bash-ran",
      askedAt: expect.any(String),
    });
    expect(
      await gateway.sessions.respond(call(), await session(bash.sessionId), { requestId: asked.pending!.id, answer: { permission: "once" } }),
    ).toMatchObject({ state: "running", delivered: true });
    expect((await readUntil(bash.sessionId, "idle", asked.cursor)).finalAssistantText).toContain("bash-ran");
    const refused = await gateway.sessions
      .respond(call(), await session(bash.sessionId), { requestId: asked.pending!.id, answer: { permission: "once" } })
      .catch((e: { error?: unknown }) => e.error);
    expect(refused).toMatchObject({ error: "input_not_pending" });

    const question = await gateway.sessions.create(call(), { title: "question", prompt: "ASKQ please" });
    const q = await readUntil(question.sessionId, "waiting_input");
    expect(q.pending).toMatchObject({
      kind: "question",
      id: expect.stringMatching(/^que_/),
      title: "Colour",
      options: [
        { label: "Red", description: "Warm" },
        { label: "Blue", description: "Cool" },
      ],
    });
    await gateway.sessions.respond(call(), await session(question.sessionId), { requestId: q.pending!.id, answer: { text: "Red" } });
    expect((await readUntil(question.sessionId, "idle", q.cursor)).finalAssistantText).toContain('"Which colour should the button be?"="Red"');
  });

  it("wakes a waiting read when the reply lands instead of polling, sharing one upstream stream", async () => {
    // The stream outlives its last watcher by more than this test lasts: a real engine may answer
    // before a read starts (the read then needs no stream), and the count must not depend on that.
    const gateway = gatewayProcess({ lingerMs: 60_000 });
    const who = member();
    const call = () => ({ ...who, referenceId: newReferenceId() });
    // Warm up: the first prompt of an engine instance is slow.
    const warm = await gateway.sessions.create(call(), { title: "warm", prompt: "warm up" });
    expect((await readOf(gateway, who, warm.sessionId, { waitMs: 10_000 })).state).toBe("idle");
    const [a, b] = await Promise.all([
      gateway.sessions.create(call(), { title: "a", prompt: "one" }),
      gateway.sessions.create(call(), { title: "b", prompt: "two" }),
    ]);
    const started = Date.now();
    const reads = await Promise.all([a, b].map((s) => readOf(gateway, who, s.sessionId, { waitMs: 10_000 })));
    expect(reads.map((r) => [r.state, r.finalAssistantText])).toEqual([
      ["idle", `${reply}one`],
      ["idle", `${reply}two`],
    ]);
    expect(gateway.events.openStreams()).toBe(1);
    if (!real) {
      // The echo engine answers 100 ms after the prompt; polling every 500 ms could not be this quick.
      expect(Date.now() - started).toBeLessThan(450);
      // The previous test's process closed its stream; the engine may take a moment to notice.
      await expect.poll(() => witness.engineEventStreams(), { timeout: 2_000 }).toBe(1);
    }
  });

  it("never shows live text heard from the middle as the whole reply: on a second replica, and after a reconnect", async () => {
    const first = gatewayProcess();
    const who = member();
    const created = await first.sessions.create({ ...who, referenceId: newReferenceId() }, { title: "replicas", prompt: "SLOW replicas" });
    let heard: ReadResult | undefined;
    for (let i = 0; i < 40 && !heard?.partialText?.includes("replicas"); i++) heard = await readOf(first, who, created.sessionId, { waitMs: 400 });
    // The replica that listened from the prompt on has the whole text so far.
    expect(heard?.partialText).toMatch(new RegExp(`^${reply}SLOW replicas`));
    // A second replica on the same database joins mid-reply: it says the start is missing.
    const second = gatewayProcess();
    let joined: ReadResult | undefined;
    for (let i = 0; i < 20 && !joined?.partialText; i++) joined = await readOf(second, who, created.sessionId, { waitMs: 400 });
    expect(joined?.partialText).toMatch(START_MISSING);
    expect(joined?.partialText).not.toContain(`${reply}SLOW`);
    // The first replica's stream drops and reconnects while the reply goes on: it keeps the start
    // it heard and says where deltas may have been missed.
    witness.cutEventStreams();
    let rejoined: ReadResult | undefined;
    for (let i = 0; i < 20 && !rejoined?.partialText?.includes("reconnected here"); i++)
      rejoined = await readOf(first, who, created.sessionId, { waitMs: 400 });
    expect(rejoined?.partialText).toMatch(
      new RegExp(`^${reply}SLOW replicas[^]* \\[…the gateway's event stream reconnected here; some of this reply may be missing…\\] `),
    );
    await first.sessions.stop({ ...who, referenceId: newReferenceId() }, (await first.ledger.find(who, created.sessionId)) as LedgerSession);
    // Once the reply has ended, the whole text is the worker's and every replica shows it.
    const ended = await readOf(second, who, created.sessionId, { waitMs: 3_000 });
    expect(ended.messages.at(-1)?.text).toMatch(new RegExp(`^${reply}SLOW replicas`));
  });

  // Last: the real engine restarts, and the first prompt after a start is slow.
  it.each(["SIGKILL", "SIGTERM"] as const)("ends a reply whose engine was killed mid-reply (%s), and shows every reply after it", async (signal) => {
    const gateway = gatewayProcess();
    const who = member();
    const call = () => ({ ...who, referenceId: newReferenceId() });
    const find = async () => (await gateway.ledger.find(who, created.sessionId)) as LedgerSession;
    const created = await gateway.sessions.create(call(), { title: "crash", prompt: "SLOW first" });
    let read: ReadResult | undefined;
    for (let i = 0; i < 40 && !read?.partialText?.includes("first"); i++) read = await readOf(gateway, who, created.sessionId, { waitMs: 400 });
    expect(read?.state).toBe("running");
    await restartEngine(signal);
    // The reply will never finish: it is ended, interrupted, with the text this gateway heard.
    const interrupted = await readOf(gateway, who, created.sessionId, { waitMs: 0 });
    expect(interrupted).toMatchObject({ state: "failed", lastError: { error: "turn_interrupted" } });
    expect(interrupted.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(interrupted.messages[1]!.text).toMatch(new RegExp(`^${reply}SLOW first[^]*\\[interrupted: `));
    const sent = await gateway.sessions.send(call(), await find(), { prompt: "second" });
    let after: ReadResult | undefined;
    for (let i = 0; i < 20 && after?.state !== "idle"; i++)
      after = await readOf(gateway, who, created.sessionId, { waitMs: 2_000, ...(sent.cursor ? { cursor: sent.cursor } : {}) });
    expect(after?.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "second"],
      ["assistant", `${reply}second`],
    ]);
    expect(after?.finalAssistantText).toBe(`${reply}second`);
    // A reader that starts over sees the whole session, the interrupted reply in its place.
    const whole = await readOf(gatewayProcess(), who, created.sessionId, { waitMs: 0 });
    expect(whole.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(whole.state).toBe("idle");
  });
});
