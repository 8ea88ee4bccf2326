import {
  answeredAfter,
  decodeCursor,
  type LedgerSession,
  type Logger,
  type SessionState,
  silentLogger,
  sliceTranscript,
  type Target,
  type TargetCall,
  fail,
  WorkspaceIdSchema,
} from "@openwork/remote-session-core";
import { buildCloudTranscript, type CloudTranscript } from "./cloud-transcript.js";
import { newOpencodeMessageId } from "./opencode-message-id.js";
import { createWakeAndWait } from "./wake-and-wait.js";
import { createWorkerClient, type WorkerClient } from "./worker-client.js";
import type { WorkerResolver } from "./worker-resolver.js";

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
  /** Poll of a read with `waitMs`. Default 500 ms. */
  readPollMs?: number;
  /** Per worker request. Default 10 s. */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
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
export function createCloudTarget(options: CloudTargetOptions): Target {
  const logger = options.logger ?? silentLogger;
  const readPollMs = options.readPollMs ?? 500;
  const waitForWorker = createWakeAndWait({
    resolver: options.resolver,
    logger,
    ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
    ...(options.wakePollMs === undefined ? {} : { pollMs: options.wakePollMs }),
  });
  /** The member's worker, waited for at most `budgetMs` (default: the whole call budget). */
  const clientFor = async (call: TargetCall, budgetMs?: number): Promise<{ client: WorkerClient; workerId: string }> => {
    const worker = await waitForWorker(call, budgetMs);
    const client = createWorkerClient(worker, {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.requestTimeoutMs ? { timeoutMs: options.requestTimeoutMs } : {}),
    });
    return { client, workerId: worker.workerId };
  };
  const webUrlOf = (ref: CloudRef, sessionId: string | null) =>
    options.webUrlTemplate && sessionId
      ? options.webUrlTemplate
          .replaceAll("{workspaceId}", encodeURIComponent(ref.workspaceId))
          .replaceAll("{sessionId}", encodeURIComponent(sessionId))
          .replaceAll("{workerId}", encodeURIComponent(ref.workerId))
      : undefined;

  return {
    specificationVersion: "v1",
    name: "cloud",
    label: "Cloud",
    description: "the member's cloud worker (woken on demand)",
    createArguments: { workspaceId: WorkspaceIdSchema.optional().describe("Cloud: the worker's workspace; default its active one.") },
    // An organization with cloud off does not see it, and a flag can flip mid-session: checked on
    // every call — except stop, so a running turn can always be stopped.
    availabilityRules: {
      hideWhenUnavailable: true,
      recheckOnEveryCall: true,
      unavailableError: { code: "cloud_not_available", message: "cloud sessions are turned off for this organization" },
      allowWhileUnavailable: ["stop"],
    },

    availability: async (call) => ({ available: await options.isCloudEnabled(call) }),

    create: async (call, input) => {
      const { client, workerId } = await clientFor(call);
      const workspaceId = (input.extra.workspaceId as string | undefined) ?? (await activeWorkspace(client));
      const remote = await client.createSession(workspaceId, input.title);
      const promptId = input.prompt ? newOpencodeMessageId() : undefined;
      if (input.prompt && promptId) {
        try {
          await client.promptAsync(workspaceId, remote.id, { text: input.prompt, messageID: promptId, model: input.model });
        } catch (error) {
          // No half-created session: the caller will retry the whole create.
          await client.deleteSession(workspaceId, remote.id).catch(() => {});
          throw error;
        }
      }
      const ref: CloudRef = { workerId, workspaceId };
      logger.info("cloud target: session created", { sessionId: input.sessionId, referenceId: call.referenceId, workerId, promptChars: input.prompt?.length ?? 0 });
      const webUrl = webUrlOf(ref, remote.id);
      return {
        state: input.prompt ? "running" : "idle",
        targetSessionId: remote.id,
        targetRef: { ...ref, ...(promptId ? { lastPromptId: promptId } : {}) },
        ...(webUrl ? { webUrl } : {}),
      };
    },

    send: async (call, session, input) => {
      const { client } = await clientFor(call);
      const { ref, remoteId } = locate(session);
      const messageId = input.messageId ?? newOpencodeMessageId();
      // A retried send with the same message id finds its prompt already there.
      const alreadyPresent = input.messageId !== undefined && (await client.hasMessage(ref.workspaceId, remoteId, messageId));
      if (!alreadyPresent) await client.promptAsync(ref.workspaceId, remoteId, { text: input.prompt, messageID: messageId });
      logger.info("cloud target: prompt sent", { sessionId: session.id, referenceId: call.referenceId, alreadyPresent, promptChars: input.prompt.length });
      return { sessionId: session.id, messageId, state: "accepted", alreadyPresent, sessionState: "running", targetRef: { lastPromptId: messageId } };
    },

    read: async (call, session, input) => {
      const position = decodeCursor(session.id, input.cursor);
      // A read never waits for a waking worker longer than it asked to wait.
      const { client } = await clientFor(call, input.waitMs);
      const { ref, remoteId } = locate(session);
      const deadline = Date.now() + input.waitMs;
      for (;;) {
        const [messages, status] = await Promise.all([client.messages(ref.workspaceId, remoteId), client.status(ref.workspaceId)]);
        const transcript = buildCloudTranscript(messages);
        // Right after prompt_async a fresh worker may neither list the session as busy nor have
        // stored the prompt yet: until our last prompt shows up, its turn has not even begun.
        const awaited = session.targetRef.lastPromptId;
        const promptPending = typeof awaited === "string" && !messages.some((m) => m.info.id === awaited);
        const state = promptPending ? "running" : stateOf(transcript, status[remoteId]?.type);
        const settled = answeredAfter(transcript, position) || state !== "running" || Date.now() >= deadline || call.signal?.aborted;
        if (settled) {
          return sliceTranscript({ session, target: "cloud", state, transcript, position, cursor: input.cursor, limit: input.limit, from: input.from, webUrl: webUrlOf(ref, remoteId) });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(readPollMs, Math.max(0, deadline - Date.now()))));
      }
    },

    newMessageId: () => newOpencodeMessageId(),

    // Abort answers true even for a session the worker does not know, and for one with nothing
    // running: look first, so a stop reports what it did and list and read never disagree.
    stop: async (call, session) => {
      const { client } = await clientFor(call);
      const { ref, remoteId } = locate(session);
      const [messages, status] = await Promise.all([client.messages(ref.workspaceId, remoteId), client.status(ref.workspaceId)]);
      if (stateOf(buildCloudTranscript(messages), status[remoteId]?.type) !== "running") return { sessionId: session.id, stopped: false };
      await client.abort(ref.workspaceId, remoteId);
      return { sessionId: session.id, stopped: true, sessionState: "stopped" };
    },
  };
}

async function activeWorkspace(client: WorkerClient): Promise<string> {
  const { items, activeId } = await client.workspaces();
  const id = activeId ?? items[0]?.id;
  return id ?? fail("cloud_runtime_failed", "the cloud worker has no workspace");
}

function locate(session: LedgerSession): { ref: CloudRef; remoteId: string } {
  const { workerId, workspaceId } = session.targetRef;
  if (typeof workspaceId !== "string" || !session.targetSessionId) {
    return fail("unknown_session", "this session has no cloud worker session");
  }
  return { ref: { workerId: String(workerId ?? ""), workspaceId }, remoteId: session.targetSessionId };
}

/** The session's state from the worker's status and its messages (status alone races). */
function stateOf(transcript: CloudTranscript, status: string | undefined): SessionState {
  if (status === "busy" || status === "retry") return "running";
  if (!transcript.turnOver) return "running";
  if (transcript.lastError?.error === "MessageAbortedError") return "stopped";
  return "idle";
}
