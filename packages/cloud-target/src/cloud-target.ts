import {
  errorFacts,
  type LedgerSession,
  type Logger,
  type SessionState,
  silentLogger,
  type Target,
  type TargetCall,
  type TargetCreateInput,
  WorkspaceIdSchema,
} from "@openwork/remote-session-core";
import { CLOUD_ERRORS, fail } from "./cloud-errors.js";
import { answeredAfter, checkAnswerFits, inputNotPending, decodeCursor, encodeCursor, sliceTranscript } from "@openwork/remote-session-core/target";
import { buildCloudTranscript } from "./cloud-transcript.js";
import { type MessageWithParts, newOpencodeMessageId } from "@openwork/opencode-client";
import { sessionRequests } from "./pending-requests.js";
import { cloudSessionState } from "./turn-state.js";
import { type FollowedTurn, followTurn, type OnObserved } from "./follow-turn.js";
import { createWakeAndWait } from "./wake-and-wait.js";
import { createWorkerClient, type PromptBody, type WorkerClient } from "./worker-client.js";
import { hasEntryRules, sessionEntryName, sessionEntryRules } from "./session-entry.js";
import { createWorkerEvents, type EventSource, type SessionSignals, type SessionWatch, type WorkerEvents } from "./worker-events.js";
import type { ReadyWorker, WorkerResolver } from "./worker-resolver.js";

export interface CloudTargetOptions {
  resolver: WorkerResolver;
  /** Whether the member's organization has cloud on (`capabilities.cloud`); asked live. */
  isCloudEnabled: (scope: { organizationId: string; memberId: string }) => Promise<boolean>;
  /**
   * The OpenWork Web link of a session, with `{workspaceId}`, `{sessionId}` (the worker's) and
   * `{workerId}` filled in, e.g. `https://app.openwork.dev/w/{workspaceId}/session/{sessionId}`.
   */
  webUrlTemplate?: string;
  /** How long a call waits for a waking worker. Default 25 s. */
  budgetMs?: number;
  /** Readiness poll while waking. Default 1 s. */
  wakePollMs?: number;
  /** Poll of a read with `waitMs` when the worker's event stream is not available. Default 500 ms. */
  readPollMs?: number;
  /**
   * The worker event streams (`createWorkerEvents`); pass one to share it among targets or tune
   * it. Default: one per target.
   */
  events?: WorkerEvents;
  /** How long a prompt may show neither a reply nor a busy worker before its turn counts as failed. Default 10 s. */
  turnStartGraceMs?: number;
  /** How long create and send keep listening for a turn's end when nobody reads it. Default 10 min. */
  followMs?: number;
  /**
   * Where the turns a create, send or respond started are seen to end (idle, failed, stopped) or
   * to ask the human (waiting_input), whether anyone reads the session or not: the host records
   * it in the ledger (`recordObservedStates` of the core), so what follows a session's state (its
   * member's notifications) does not wait for a read. Without it, only reads record the state.
   * Answers `false` when the row did not move (recordObservedStates does): a state the session
   * held before the call is then told again shortly, once the call's own record has landed.
   */
  onObserved?: OnObserved;
  /** Per worker request. Default 10 s. */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
  /**
   * Issues the gateway's MCP entry for the engine running a session (its URL and the session's
   * own credential): registered in the session's workspace as its own entry (`ows-<session id>`,
   * which only that session is let see) before each of its prompts that finds it idle, so what its
   * agent creates is recorded as spawned by it. Default: none.
   */
  sessionMcp?: (subject: { organizationId: string; userId: string; memberId: string; sessionId: string; depth: number }) => {
    url: string;
    authorization: string;
  };
  logger?: Logger;
}

interface CloudRef {
  workerId: string;
  workspaceId: string;
}

/**
 * The cloud Target: sessions on the member's cloud worker (openwork-server fronting opencode). It
 * keeps no state of its own: the worker holds the session, the core records the ledger row.
 */
/** The cloud Target, and `close()` for the worker event streams it opened. */
export type CloudTarget = Target & { close(): void };

export function createCloudTarget(options: CloudTargetOptions): CloudTarget {
  const logger = options.logger ?? silentLogger;
  const readPollMs = options.readPollMs ?? 500;
  const graceMs = options.turnStartGraceMs ?? 10_000;
  const events = options.events ?? createWorkerEvents({ logger, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const waitForWorker = createWakeAndWait({
    resolver: options.resolver,
    logger,
    ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
    ...(options.wakePollMs === undefined ? {} : { pollMs: options.wakePollMs }),
  });
  /** The member's worker, waited for at most `budgetMs` (default: the whole call budget). */
  const clientFor = async (call: TargetCall, budgetMs?: number): Promise<{ client: WorkerClient; worker: ReadyWorker }> => {
    const worker = await waitForWorker(call, budgetMs);
    const client = createWorkerClient(worker, {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.requestTimeoutMs ? { timeoutMs: options.requestTimeoutMs } : {}),
    });
    return { client, worker };
  };
  // Followed turns end when the target closes (their streams close with it; they would poll).
  const closing = new AbortController();
  const sourceOf = (worker: ReadyWorker, workspaceId: string): EventSource => ({ url: worker.url, clientToken: worker.clientToken, workspaceId });
  /** One look at a session on its worker: its transcript, and the state it shows. */
  const lookAt = async (client: WorkerClient, workspaceId: string, remoteId: string, session: StateBasis, signals: SessionSignals | undefined) => {
    const { messages, status, workerIdle } = await observe(client, workspaceId, remoteId);
    // Only a busy turn can be waiting on the human: idle sessions cost no extra request.
    const requests = status?.type === "busy" ? sessionRequests(remoteId, await client.requests(workspaceId), messages) : [];
    const transcript = buildCloudTranscript(messages, { liveText: signals?.liveText, liveTextPartial: signals?.liveTextPartial, workerIdle });
    return { transcript, view: cloudSessionState({ transcript, status, signals, session, now: Date.now(), graceMs, pending: requests[0]?.pending }) };
  };
  /**
   * Listens to a session from before its prompt until its turn ends: an error that ends a turn
   * before any reply is only ever an event, sent within milliseconds of the prompt. With
   * `onObserved`, what the turn comes to is looked at and told (see `followTurn`).
   */
  const follow = async (client: WorkerClient, source: EventSource, remoteId: string, turn: Turn): Promise<void> => {
    const watch = events.watch(source, remoteId);
    await Promise.race([watch.connected, delay(1_000)]);
    const until = Date.now() + (options.followMs ?? 600_000);
    const { onObserved } = options;
    void (async () => {
      try {
        if (!onObserved) return await listen(watch, until);
        const call = { organizationId: turn.call.organizationId, userId: turn.call.userId, memberId: turn.call.memberId, referenceId: turn.call.referenceId };
        const basis = { state: "running" as const, lastError: null, targetRef: turn.targetRef };
        const look = async () => (await lookAt(client, source.workspaceId, remoteId, basis, watch.signals())).view;
        const followed: FollowedTurn = { call, sessionId: turn.sessionId, from: turn.from, promptAt: turn.promptAt, look, onObserved, signal: closing.signal };
        await followTurn(watch, followed, until, graceMs, logger);
      } finally {
        watch.close();
      }
    })();
  };
  const webUrlOf = (ref: CloudRef, sessionId: string | null) =>
    options.webUrlTemplate && sessionId
      ? options.webUrlTemplate
          .replaceAll("{workspaceId}", encodeURIComponent(ref.workspaceId))
          .replaceAll("{sessionId}", encodeURIComponent(sessionId))
          .replaceAll("{workerId}", encodeURIComponent(ref.workerId))
      : undefined;

  /**
   * The session's own MCP entry in its workspace (a fresh credential), before a prompt of it goes.
   * Only while the session runs no turn: the engine cuts the open calls of the entry it replaces,
   * and a session's entry is only ever replaced by its own prompts (each session has its own). One
   * the engine could not connect, or a worker without MCP, leaves the prompt to run without it:
   * logged, never the credential.
   */
  const useMcp = async (call: TargetCall, client: WorkerClient, workspaceId: string, session: { id: string; depth: number }) => {
    if (!options.sessionMcp) return;
    const entry = options.sessionMcp({
      organizationId: call.organizationId,
      userId: call.userId,
      memberId: call.memberId,
      sessionId: session.id,
      depth: session.depth,
    });
    const facts = { sessionId: session.id, referenceId: call.referenceId };
    try {
      const held = await client.putMcpEntry(workspaceId, sessionEntryName(session.id), entry);
      if (held.status !== "connected") {
        logger.warn("cloud target: the worker's engine did not connect the session's MCP entry", {
          ...facts,
          status: held.status,
          error: held.error?.slice(0, 200),
        });
      }
    } catch (error) {
      logger.warn("cloud target: the worker took no MCP entry", { ...facts, error: errorFacts(error) });
    }
  };
  /**
   * A session created before sessions had their own entries sees every session's entry: it is
   * given the rules once, before its first own entry. True when the session has them (the row
   * records it, so this is asked once).
   */
  const ownEntryRules = async (client: WorkerClient, workspaceId: string, remoteId: string, session: { id: string; targetRef: Record<string, unknown> }) => {
    if (!options.sessionMcp || session.targetRef[OWN_ENTRY] === true) return session.targetRef[OWN_ENTRY] === true;
    if (!hasEntryRules(await client.sessionPermission(workspaceId, remoteId), session.id)) {
      await client.addSessionPermission(workspaceId, remoteId, sessionEntryRules(session.id));
    }
    return true;
  };
  /** A create's prompt, listened to from before it goes (see `follow`). */
  const promptCreate = async (
    { client, worker }: { client: WorkerClient; worker: ReadyWorker },
    ref: CloudRef,
    remoteId: string,
    prompt: PromptBody,
    turn: Turn,
  ) => {
    await follow(client, sourceOf(worker, ref.workspaceId), remoteId, turn);
    await client.promptAsync(ref.workspaceId, remoteId, prompt);
  };
  const createdOutcome = (input: TargetCreateInput, ref: CloudRef, remoteId: string, targetRef: Record<string, unknown>) => {
    const webUrl = webUrlOf(ref, remoteId);
    return { state: input.prompt ? ("running" as const) : ("idle" as const), targetSessionId: remoteId, targetRef, ...(webUrl ? { webUrl } : {}) };
  };
  /** A retried create: the worker's session an earlier attempt bound, prompted only if it does not hold the prompt yet. */
  const resumeCreate = async (
    call: TargetCall,
    client: WorkerClient,
    worker: ReadyWorker,
    input: TargetCreateInput,
    earlier: NonNullable<TargetCreateInput["earlier"]>,
  ) => {
    const { ref, remoteId } = locate(earlier);
    const promptId = typeof earlier.targetRef.createPromptId === "string" ? earlier.targetRef.createPromptId : undefined;
    const held = promptId === undefined || (await client.messages(ref.workspaceId, remoteId)).some((m) => m.info.id === promptId);
    if (input.prompt && promptId && !held) {
      await ownEntryRules(client, ref.workspaceId, remoteId, { id: input.sessionId, targetRef: earlier.targetRef });
      await useMcp(call, client, ref.workspaceId, { id: input.sessionId, depth: input.depth ?? 0 });
      const turn = {
        call,
        sessionId: input.sessionId,
        from: CREATED_FROM,
        promptAt: Date.now(),
        targetRef: { ...earlier.targetRef, lastPromptAt: Date.now() },
      };
      await promptCreate({ client, worker }, ref, remoteId, { text: input.prompt, messageID: promptId, model: input.model }, turn);
    }
    logger.info("cloud target: session create resumed", { sessionId: input.sessionId, referenceId: call.referenceId, promptHeld: held });
    return createdOutcome(input, ref, remoteId, earlier.targetRef);
  };

  return {
    specificationVersion: "v1",
    name: "cloud",
    label: "Cloud",
    description: "the member's cloud worker (woken on demand)",
    createArguments: { workspaceId: WorkspaceIdSchema.optional().describe("Cloud: the worker's workspace; default its active one.") },
    resultFields: { read: { retrying: "A running turn whose model provider failed and is being retried: which attempt, why, when next." } },
    errorCodes: CLOUD_ERRORS.codes,
    // An organization with cloud off does not see it, and a flag can flip mid-session: checked on
    // every call — except stop, so a running turn can always be stopped.
    availabilityRules: {
      hideWhenUnavailable: true,
      recheckOnEveryCall: true,
      unavailableError: { code: "cloud_not_available", message: "cloud sessions are turned off for this organization" },
      allowWhileUnavailable: ["stop"],
    },

    // A follow-up's model goes to the worker with its prompt: opencode runs that turn with it.
    sendTakesModel: true,

    availability: async (call) => ({ available: await options.isCloudEnabled(call) }),

    // Idempotent per session id: the worker's session and the prompt's message id are bound to
    // the reserved row before the prompt goes, so a retry of the create finds them and sends the
    // prompt only if the worker does not hold it yet. A failed prompt keeps the binding (the
    // worker may have taken it before the answer was lost): a retry checks instead of guessing.
    create: async (call, input) => {
      const { client, worker } = await clientFor(call);
      if (input.earlier?.targetSessionId) return resumeCreate(call, client, worker, input, input.earlier);
      const { workerId } = worker;
      const workspaceId = (input.extra.workspaceId as string | undefined) ?? (await activeWorkspace(client));
      // Born seeing only its own MCP entry: no prompt of it can ever call through another's.
      const remote = await client.createSession(workspaceId, input.title, sessionEntryRules(input.sessionId));
      const promptId = input.prompt ? newOpencodeMessageId() : undefined;
      const ref: CloudRef = { workerId, workspaceId };
      const targetRef = {
        ...ref,
        [OWN_ENTRY]: true,
        ...(promptId ? { createPromptId: promptId, lastPromptId: promptId, lastPromptAt: Date.now() } : {}),
      };
      try {
        await input.bind({ targetSessionId: remote.id, targetRef });
      } catch (error) {
        // Nothing was prompted and no row points at it: the worker keeps no half-made session.
        await client.deleteSession(workspaceId, remote.id).catch(() => {});
        throw error;
      }
      if (input.prompt && promptId) {
        await useMcp(call, client, workspaceId, { id: input.sessionId, depth: input.depth ?? 0 });
        const turn = { call, sessionId: input.sessionId, from: CREATED_FROM, promptAt: Date.now(), targetRef };
        await promptCreate({ client, worker }, ref, remote.id, { text: input.prompt, messageID: promptId, model: input.model }, turn);
      }
      logger.info("cloud target: session created", {
        sessionId: input.sessionId,
        referenceId: call.referenceId,
        workerId,
        promptChars: input.prompt?.length ?? 0,
      });
      return createdOutcome(input, ref, remote.id, targetRef);
    },

    send: async (call, session, input) => {
      const { client, worker } = await clientFor(call);
      const { ref, remoteId } = locate(session);
      const messageId = input.messageId ?? newOpencodeMessageId();
      // One look at the messages: a retried send finds its prompt already there, and the
      // transcript before the prompt says where a reader finds the reply.
      const { messages, status, workerIdle } = await observe(client, ref.workspaceId, remoteId);
      const alreadyPresent = input.messageId !== undefined && messages.some((m) => m.info.id === messageId);
      const before = buildCloudTranscript(messages, { workerIdle }).messages;
      const listed = before.findIndex((m) => m.id === messageId);
      const position = alreadyPresent && listed >= 0 ? listed : before.length;
      const promptAt = Date.now();
      let ownEntry = session.targetRef[OWN_ENTRY] === true;
      if (!alreadyPresent) {
        // A prompt sent while a turn runs waits behind it: that turn's calls go through the entry
        // it has, which a registration would cut.
        if (status === undefined) {
          ownEntry = await ownEntryRules(client, ref.workspaceId, remoteId, session);
          await useMcp(call, client, ref.workspaceId, session);
        }
        const targetRef = { ...session.targetRef, lastPromptId: messageId, lastPromptAt: promptAt };
        await follow(client, sourceOf(worker, ref.workspaceId), remoteId, {
          call,
          sessionId: session.id,
          from: [session.state, "running"],
          promptAt,
          targetRef,
        });
        await client.promptAsync(ref.workspaceId, remoteId, { text: input.prompt, messageID: messageId, ...(input.model ? { model: input.model } : {}) });
      }
      logger.info("cloud target: prompt sent", { sessionId: session.id, referenceId: call.referenceId, alreadyPresent, promptChars: input.prompt.length });
      const targetRef = {
        lastPromptId: messageId,
        ...(alreadyPresent ? {} : { lastPromptAt: promptAt }),
        ...(ownEntry ? { [OWN_ENTRY]: true } : {}),
      };
      return {
        sessionId: session.id,
        messageId,
        state: "accepted",
        alreadyPresent,
        cursor: encodeCursor(session.id, position, position - 1),
        sessionState: "running",
        targetRef,
      };
    },

    read: async (call, session, input) => {
      const position = decodeCursor(session.id, input.cursor);
      // A read never waits for a waking worker longer than it asked to wait.
      const { client, worker } = await clientFor(call, input.waitMs);
      const { ref, remoteId } = locate(session);
      const source = sourceOf(worker, ref.workspaceId);
      const deadline = Date.now() + input.waitMs;
      // Listening starts before the first look, so nothing that happens after it is missed.
      const watch = input.waitMs > 0 ? events.watch(source, remoteId) : undefined;
      try {
        if (watch) await Promise.race([watch.connected, delay(Math.min(1_000, input.waitMs))]);
        for (;;) {
          const seen = watch?.version() ?? 0;
          const signals = watch?.signals() ?? events.peek(source, remoteId);
          const { transcript, view } = await lookAt(client, ref.workspaceId, remoteId, session, signals);
          const settled = answeredAfter(transcript, position) || view.state !== "running" || Date.now() >= deadline || call.signal?.aborted;
          if (settled) {
            const slice = sliceTranscript({
              session,
              target: "cloud",
              state: view.state,
              transcript: { ...transcript, lastError: view.lastError ?? null },
              position,
              cursor: input.cursor,
              limit: input.limit,
              from: input.from,
              webUrl: webUrlOf(ref, remoteId),
            });
            return { ...slice, ...(view.pending ? { pending: view.pending } : {}), ...(view.retrying ? { fields: { retrying: view.retrying } } : {}) };
          }
          const remaining = Math.max(0, deadline - Date.now());
          // Without a live stream, poll; with one, a turn that fails silently is still noticed once the grace passes.
          await (watch?.live() ? watch.changed(seen, Math.min(remaining, graceMs)) : delay(Math.min(readPollMs, remaining)));
        }
      } finally {
        watch?.close();
      }
    },

    newMessageId: () => newOpencodeMessageId(),

    // Abort answers true even for a session the worker does not know, and for one with nothing
    // running: look first, so a stop reports what it did and list and read never disagree.
    stop: async (call, session) => {
      const { client, worker } = await clientFor(call);
      const { ref, remoteId } = locate(session);
      const { messages, status, workerIdle } = await observe(client, ref.workspaceId, remoteId);
      const signals = events.peek(sourceOf(worker, ref.workspaceId), remoteId);
      const view = cloudSessionState({ transcript: buildCloudTranscript(messages, { workerIdle }), status, signals, session, now: Date.now(), graceMs });
      if (view.state !== "running") return { sessionId: session.id, stopped: false };
      await client.abort(ref.workspaceId, remoteId);
      return { sessionId: session.id, stopped: true, sessionState: "stopped" };
    },

    // Answered through the engine's own reply routes; the turn resumes (or, refused, ends) there.
    respond: async (call, session, input) => {
      const { client, worker } = await clientFor(call);
      const { ref, remoteId } = locate(session);
      const request = sessionRequests(remoteId, await client.requests(ref.workspaceId), []).find((r) => r.pending.id === input.requestId);
      if (!request) return inputNotPending(input.requestId);
      checkAnswerFits(request.kind, input.answer);
      await follow(client, sourceOf(worker, ref.workspaceId), remoteId, {
        call,
        sessionId: session.id,
        from: [session.state, "running"],
        promptAt: Date.now(),
        targetRef: session.targetRef,
      });
      const { answer } = input;
      const delivered =
        "permission" in answer
          ? await client.replyPermission(ref.workspaceId, input.requestId, answer.permission)
          : await client.replyQuestion(
              ref.workspaceId,
              input.requestId,
              Array.from({ length: request.kind === "question" ? request.questions : 1 }, () => [answer.text]),
            );
      if (!delivered) return inputNotPending(input.requestId);
      logger.info("cloud target: request answered", { sessionId: session.id, referenceId: call.referenceId, kind: request.kind });
      return { sessionId: session.id, requestId: input.requestId, state: "running", alreadyAnswered: false, delivered: true, sessionState: "running" };
    },

    // The event streams this target opened (none it was handed: their owner closes those), so a
    // host's process can end once it stops the target.
    close: () => {
      closing.abort();
      if (!options.events) events.close();
    },
  };
}

/**
 * A session's messages and status, read so that "idle" can be trusted about the messages: the
 * messages first, then the status. When the worker is idle but a reply was incomplete, the
 * messages once more: a reply that finished meanwhile shows finished, and one still incomplete,
 * listed before the worker said idle, was abandoned (a reply begun since is another message).
 */
async function observe(client: WorkerClient, workspaceId: string, sessionId: string) {
  const first = await client.messages(workspaceId, sessionId);
  const status = (await client.status(workspaceId))[sessionId];
  const incomplete = lastIncompleteReply(first);
  if (status !== undefined || incomplete === undefined) return { messages: first, status, workerIdle: status === undefined };
  const messages = await client.messages(workspaceId, sessionId);
  return { messages, status, workerIdle: lastIncompleteReply(messages) === incomplete };
}

/** Keeps a turn's stream open until it ends, so an error that ends it is heard (no host to tell). */
async function listen(watch: SessionWatch, until: number): Promise<void> {
  let busy = false;
  while (watch.live() && Date.now() < until) {
    const signals = watch.signals();
    if (signals.error || (busy && signals.status === null)) return;
    busy ||= signals.status !== null;
    await watch.changed(watch.version(), until - Date.now());
  }
}

function lastIncompleteReply(messages: MessageWithParts[]): string | undefined {
  return messages.findLast((m) => m.info.role === "assistant" && m.info.time.completed === undefined && m.info.error === undefined)?.info.id;
}

async function activeWorkspace(client: WorkerClient): Promise<string> {
  const { items, activeId } = await client.workspaces();
  const id = activeId ?? items[0]?.id;
  return id ?? fail("cloud_runtime_failed", "the cloud worker has no workspace");
}

function locate(session: Pick<LedgerSession, "targetRef" | "targetSessionId">): { ref: CloudRef; remoteId: string } {
  const { workerId, workspaceId } = session.targetRef;
  if (typeof workspaceId !== "string" || !session.targetSessionId) {
    return fail("unknown_session", "this session has no cloud worker session");
  }
  return { ref: { workerId: String(workerId ?? ""), workspaceId }, remoteId: session.targetSessionId };
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the state of a session is read against: the ledger row, or what a followed turn knows of it. */
type StateBasis = Pick<LedgerSession, "state" | "lastError" | "targetRef">;

/** A turn a call started, as its follower knows it (see `FollowedTurn`). */
interface Turn {
  call: TargetCall;
  sessionId: string;
  from: readonly SessionState[];
  promptAt: number;
  /** The row's target reference once the call is recorded: the prompt the turn answers. */
  targetRef: Record<string, unknown>;
}

/** In a row's target reference: the worker's session has the rules that hide other sessions' entries. */
const OWN_ENTRY = "ownMcpEntry";

// A create's row is still queued until the core records what the create answered (running).
const CREATED_FROM: readonly SessionState[] = ["queued", "running"];
