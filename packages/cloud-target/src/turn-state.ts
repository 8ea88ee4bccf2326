import type { LedgerSession } from "@openwork/remote-session-core";
import type { PendingInput, SessionState } from "@openwork/remote-session-core/internal";
import type { CloudTranscript } from "./cloud-transcript.js";
import type { SessionSignals } from "./worker-events.js";

/** The worker's status of one session (`GET session/status`; absent when idle). */
export interface WorkerStatus {
  type: string;
  attempt?: number | undefined;
  message?: string | undefined;
  next?: number | undefined;
}

/** A session's state as read from the worker, with what explains it. */
export interface CloudSessionView {
  state: SessionState;
  lastError?: { error: string; message: string };
  /** The model provider failed and the worker is retrying. */
  retrying?: { attempt: number; message: string; nextAt?: string };
  /** What a `waiting_input` session asks. */
  pending?: PendingInput;
}

export interface CloudStateInput {
  transcript: CloudTranscript;
  status: WorkerStatus | undefined;
  /** What the event stream said, when the gateway was listening. */
  signals: SessionSignals | undefined;
  /** The ledger row: the last prompt this gateway sent (`targetRef`), a failure already recorded. */
  session: Pick<LedgerSession, "state" | "lastError" | "targetRef">;
  now: number;
  /** How long a turn may show neither a reply nor a busy status before it counts as failed. */
  graceMs: number;
  /** The oldest permission or question the session's running turn waits on. */
  pending?: PendingInput | undefined;
}

const SILENT_FAILURE = { error: "turn_failed", message: "the cloud worker ended the turn without a reply and reported no error" };

/**
 * The state of a cloud session. A turn is over when the worker is not busy and a reply newer
 * than the prompt finished, failed or was stopped. A turn that fails before any reply leaves no
 * trace in the messages — only a `session.error` event — so an idle worker with an unanswered
 * prompt is failed: with the event's error when the gateway heard it, with a failure it already
 * recorded, or, once `graceMs` has passed, without one (a fresh worker may show neither the
 * prompt nor a busy status for a moment after accepting it). A busy turn with a permission or
 * question waiting is `waiting_input`.
 */
export function cloudSessionState(input: CloudStateInput): CloudSessionView {
  const { transcript, status, signals, session } = input;
  if (status?.type === "retry") return { state: "running", retrying: retryingOf(status) };
  if (status?.type === "busy") return input.pending ? { state: "waiting_input", pending: input.pending } : { state: "running" };
  const lastPromptId = typeof session.targetRef.lastPromptId === "string" ? session.targetRef.lastPromptId : undefined;
  const promptStored = lastPromptId === undefined || transcript.lastUser?.id === lastPromptId || transcript.messages.some((m) => m.id === lastPromptId);
  // A refused permission ends the turn at the tool call: the session waits for a new prompt.
  if (promptStored && transcript.haltedOnTool) return { state: "idle" };
  if (promptStored && transcript.turnOver) {
    if (transcript.aborted) return { state: "stopped", ...(transcript.lastError ? { lastError: transcript.lastError } : {}) };
    if (transcript.lastError) return { state: "failed", lastError: transcript.lastError };
    return { state: "idle" };
  }
  const heard = signals?.error;
  if (heard && promptStored && (heard.userMessageId === null || heard.userMessageId === transcript.lastUser?.id)) {
    return { state: "failed", lastError: { error: errorCodeOf(heard), message: heard.message } };
  }
  if (session.state === "failed" && session.lastError) return { state: "failed", lastError: session.lastError };
  const promptedAt = typeof session.targetRef.lastPromptAt === "number" ? session.targetRef.lastPromptAt : transcript.lastUser?.createdAt;
  if (promptedAt !== undefined && input.now - promptedAt > input.graceMs) return { state: "failed", lastError: SILENT_FAILURE };
  return { state: "running" };
}

function retryingOf(status: WorkerStatus): NonNullable<CloudSessionView["retrying"]> {
  return {
    attempt: status.attempt ?? 1,
    message: (status.message ?? "the model provider failed").slice(0, 500),
    ...(status.next ? { nextAt: new Date(status.next).toISOString() } : {}),
  };
}

/** The error's code: `model_unavailable` for an unknown model, the engine's name when it says something. */
function errorCodeOf(error: { name: string; message: string }): string {
  if (/model not found/i.test(error.message) || error.name === "ProviderModelNotFoundError") return "model_unavailable";
  return error.name === "UnknownError" ? "turn_failed" : error.name;
}
