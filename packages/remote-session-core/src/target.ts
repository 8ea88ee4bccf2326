import type { LedgerSession } from "./ledger/ledger-session.js";
import type { SessionError } from "./errors/session-error.js";
import type { SessionState } from "./session-state.js";
import type { CreateSessionInput, ReadInput, SendInput } from "./session-inputs.js";
import type { TranscriptMessage } from "./transcript/transcript-message.js";

/** Who owns a session: the organization and the creating principal's user id (as OpenWork keys them). */
export interface OwnerScope {
  organizationId: string;
  userId: string;
}

/** An active membership: what desktop runners are registered under (a runner token's `m`). */
export interface MemberScope {
  organizationId: string;
  /** The organization membership id (den-api's `member.orgMembershipId`). */
  memberId: string;
}

/**
 * One call into a target, always from the verified auth context, never from arguments: the
 * owner (sessions, idempotency, rate limits) and the caller's active membership (desktops).
 */
export interface TargetCall extends OwnerScope, MemberScope {
  /** Put on every log line and error of this call. */
  referenceId: string;
  signal?: AbortSignal;
}

/** A desktop runner as `list` and `targets` show it. */
export interface RunnerPresence {
  runnerId: string;
  name: string;
  platform: string;
  online: boolean;
  lastSeenAt: string | null;
}

export interface TargetAvailability {
  available: boolean;
  /** For targets made of machines (desktops): each machine and whether it is present. */
  machines?: RunnerPresence[];
}

export interface CreateResult {
  sessionId: string;
  target: string;
  state: SessionState;
  webUrl?: string;
  /** The desktop runner the session went to. */
  runner?: { runnerId: string; name: string };
  /** Store-and-forward deadline: the task expires if not delivered by then. */
  expiresAt?: string;
}

export interface SendResult {
  sessionId: string;
  messageId: string;
  state: "accepted";
  /** The prompt was already there (a retried send): it was not sent twice. */
  alreadyPresent: boolean;
}

export interface ReadResult {
  sessionId: string;
  target: string;
  state: SessionState;
  title: string;
  webUrl?: string;
  /** Complete messages after the cursor, oldest first, at most `limit`. */
  messages: TranscriptMessage[];
  /** Pass it to the next read: it never skips or repeats a message. */
  cursor: string;
  /** More complete messages wait after this slice. */
  hasMore: boolean;
  /** The text of the last assistant message of the latest finished turn, bounded. */
  finalAssistantText?: string;
  /** Text of the assistant message still being written (not yet in `messages`). */
  partialText?: string;
  lastError?: Pick<SessionError, "error" | "message"> | { error: string; message: string };
}

export interface StopResult {
  sessionId: string;
  stopped: boolean;
}

/**
 * The port every target implements (cloud workers, desktop apps, whatever comes next). Methods
 * reject only with a `SessionFailure` for the codes their TSDoc lists; anything else is a bug.
 * The caller has already validated inputs, checked policy and found the session in the ledger
 * (so a foreign or unknown id never reaches a target).
 */
export interface Target {
  readonly specificationVersion: "v1";
  /** The `target` value of sessions this target serves (`cloud`, `desktop`). */
  readonly name: string;
  /** Whether the member can use this target now, and its machines if it has any. */
  availability(call: TargetCall): Promise<TargetAvailability>;
  /**
   * Starts a session and records it in the ledger.
   * Codes: desktop `desktop_offline`, `unknown_computer`, `ambiguous_computer`,
   * `computer_offline`, `desktop_update_required`; cloud `needs_cloud_setup`, `cloud_runtime_*`,
   * `unknown_workspace`.
   */
  create(call: TargetCall, input: CreateSessionInput): Promise<CreateResult>;
  /** Sends a follow-up prompt. Codes: `unknown_session`, `session_not_active`, plus create's. */
  send(call: TargetCall, session: LedgerSession, input: SendInput): Promise<SendResult>;
  /** A transcript slice; with `waitMs`, waits for something newer than the cursor. Codes: `unknown_session`, `invalid_capability_arguments` (cursor). */
  read(call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult>;
  /** Stops the current turn (or a not yet delivered task). Codes: `unknown_session`. */
  stop(call: TargetCall, session: LedgerSession): Promise<StopResult>;
  /**
   * A new prompt id in this target's own format. An idempotent send reserves one before its
   * first attempt and passes it to every retry as `messageId`.
   */
  newMessageId(): string;
}
