import type { Logger, Target } from "@openwork/remote-session-core";
import { WorkspaceIdSchema } from "@openwork/remote-session-core/internal";
import { newOpencodeMessageId } from "@openwork/opencode-client/internal";
import { closeCloudContext, createCloudContext } from "./cloud-context.js";
import { createCloudSession } from "./cloud-create.js";
import { CLOUD_ERRORS } from "./cloud-errors.js";
import { followRunning } from "./cloud-follow.js";
import { readCloudSession } from "./cloud-read.js";
import { respondCloudRequest } from "./cloud-respond.js";
import { sendCloudPrompt } from "./cloud-send.js";
import { stopCloudSession } from "./cloud-stop.js";
import type { OnObserved } from "./follow-turn.js";
import type { WorkerEvents } from "./worker-events.js";
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
   * How long a budgeted turn is followed (its spend checked as each step ends) when nobody reads
   * it: a budget must hold however long the turn runs. Default 24 h (`BUDGETED_FOLLOW_MS`).
   */
  budgetedFollowMs?: number;
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

/**
 * The cloud Target: sessions on the member's cloud worker (openwork-server fronting opencode). It
 * keeps no state of its own: the worker holds the session, the core records the ledger row.
 */
/** The cloud Target, and `close()` for the worker event streams it opened. */
export type CloudTarget = Target & { close(): void };

export function createCloudTarget(options: CloudTargetOptions): CloudTarget {
  const ctx = createCloudContext(options);
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
    create: (call, input) => createCloudSession(ctx, call, input),
    send: (call, session, input) => sendCloudPrompt(ctx, call, session, input),
    read: (call, session, input) => readCloudSession(ctx, call, session, input),
    newMessageId: () => newOpencodeMessageId(),
    stop: (call, session) => stopCloudSession(ctx, call, session),
    respond: (call, session, input) => respondCloudRequest(ctx, call, session, input),
    followRunning: (session, referenceId) => followRunning(ctx, session, referenceId),
    close: () => closeCloudContext(ctx),
  };
}
