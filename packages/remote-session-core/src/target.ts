import type { LedgerSession } from "./ledger/ledger-session.js";
import type { ObservedSpend } from "./ledger/session-spend.js";
import type { SessionError } from "./errors/session-error.js";
import type { SessionState } from "./session-state.js";
import type { ZodType } from "zod";
import type { ErrorCodeTable, SessionErrorCode } from "./errors/codes.js";
import type { Model, ReadInput, SendInput } from "./session-inputs.js";
import type { EngineRespondInput, PendingInput } from "./pending-input.js";
import type { TranscriptMessage } from "./transcript/transcript-message.js";

/** Who owns a session: the organization and the creating principal's user id (as OpenWork keys them). */
export interface OwnerScope {
  organizationId: string;
  userId: string;
}

/** An active membership: what a target's machines are registered under (a desktop runner token's `m`). */
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

/**
 * Members a target adds to one of its results, by name (a desktop's `waitingFor`): the capability
 * spreads them into the result beside the core's members. Their names are declared in the
 * target's `resultFields`, apart from the core's.
 */
export type TargetFields = Record<string, unknown>;

export interface TargetAvailability {
  available: boolean;
  /**
   * For targets made of machines (desktops): each machine, in the target's own shape, as `list`
   * shows it (beside its target's name).
   */
  machines?: readonly TargetFields[];
  /** The target's own members of its entry in `targets` (the desktop's machines there), declared in `resultFields.targets`. */
  fields?: TargetFields;
}

/** What `create` answers the caller. */
export interface CreateResult {
  sessionId: string;
  target: string;
  state: SessionState;
  /** The session whose engine started this one, when one did. */
  spawnedBy?: string;
  /** Its depth in that spawn tree (1 for a session a person's session started). */
  depth?: number;
  webUrl?: string;
  /** The target's own members (the desktop it went to, its deadline), as its create reported them. */
  fields?: TargetFields;
}

/**
 * What a target's `create` reports: the state the session is in and what the core records for
 * it (the target's session id, reference ids). The core has already reserved the session row.
 */
export interface CreateOutcome {
  state: SessionState;
  targetSessionId?: string;
  /** Ids the target needs to find the session again; merged into the row. */
  targetRef?: Record<string, unknown>;
  webUrl?: string;
  /** The target's own members of the result, declared in `resultFields.create`. */
  fields?: TargetFields;
}

export interface SendResult {
  sessionId: string;
  messageId: string;
  state: "accepted";
  /** The prompt was already there (a retried send): it was not sent twice. */
  alreadyPresent: boolean;
  /**
   * A read cursor just before this prompt, where the target can tell: a read from it (with
   * `waitMs`) waits for the reply and reports it as the final reply, never an older one.
   */
  cursor?: string;
  /** The target's own members (a desktop's request id for the follow-up), declared in `resultFields.send`. */
  fields?: TargetFields;
}

/** What a target's `send` reports: the result, and the session's state and references to record. */
export interface SendOutcome extends SendResult {
  /** The session's state now (recorded compare-and-set against the state the caller read). */
  sessionState?: SessionState;
  targetRef?: Record<string, unknown>;
}

export interface ReadResult {
  sessionId: string;
  target: string;
  /** The session's state as the target observed it; the core records a change (compare-and-set). */
  state: SessionState;
  title: string;
  webUrl?: string;
  /** Complete messages after the cursor, oldest first, at most `limit`. */
  messages: TranscriptMessage[];
  /** Pass it to the next read: it never skips or repeats a message. */
  cursor: string;
  /** More complete messages wait after this slice. */
  hasMore: boolean;
  /** The text of the last assistant message of the latest finished turn, bounded (SESSION_LIMITS.finalText). */
  finalAssistantText?: string;
  /** The final reply is longer than `finalAssistantText` carries: the rest is only in the session itself. */
  finalTextTruncated?: true;
  /** Text of the assistant message still being written (not yet in `messages`). */
  partialText?: string;
  lastError?: Pick<SessionError, "error" | "message"> | { error: string; message: string };
  /** A `waiting_input` session: what it asks the human; answer with `respond`. */
  pending?: PendingInput;
  /**
   * Whoever answers this session's reads (an OpenWork desktop answers them itself) had not
   * answered within the call: the caller reads again with the same cursor. A read that waits
   * returns at once with it; the target says why in its fields.
   */
  awaitingTarget?: true;
  /** The target's own members (what a queued turn waits for, a retried model call…), declared in `resultFields.read`. */
  fields?: TargetFields;
  /**
   * What the session spent in total, for a target whose engine keeps totals (a cloud worker's
   * messages): the core records it, never below what it had, and shows the ledger's spend.
   */
  observedSpend?: ObservedSpend;
}

export interface StopResult {
  sessionId: string;
  stopped: boolean;
}

/** What a target's `stop` reports: the result, and the state to record when it knows it. */
export interface StopOutcome extends StopResult {
  sessionState?: SessionState;
}

/** What `respond` answers: the request answered and the session's state after it. */
export interface RespondResult {
  sessionId: string;
  requestId: string;
  state: SessionState;
  /** The same answer had already been given: nothing was sent again. */
  alreadyAnswered: boolean;
  /**
   * Whether the answer reached the engine within the call. False: it waits for the desktop to
   * take it (the session reads `waiting_input` until then).
   */
  delivered: boolean;
}

/** What a target's `respond` reports: the result, and the state to record. */
export interface RespondOutcome extends RespondResult {
  sessionState?: SessionState;
}

/** When a target is not available to a caller, what the capability does about it. */
export interface AvailabilityRules {
  /** Leave it out of search's `target` enum and the `targets` result. Default false (shown, as offline). */
  hideWhenUnavailable?: boolean;
  /**
   * Ask `availability` again on every call that uses an existing session of this target, and
   * refuse with `unavailableError` when it says no (a flag can flip mid-session). Default false.
   */
  recheckOnEveryCall?: boolean;
  /** The refusal when unavailable. Default `invalid_capability_arguments`. */
  unavailableError?: { code: SessionErrorCode; message: string };
  /** Calls that stay possible while unavailable (stopping a running turn always should). */
  allowWhileUnavailable?: readonly ("read" | "stop")[];
}

/**
 * The names of the members a target adds to its results, each with a line saying what it holds.
 * The capability refuses, when it is built, a name that is already one of its own.
 */
export interface ResultFields {
  readonly create?: Readonly<Record<string, string>>;
  readonly read?: Readonly<Record<string, string>>;
  readonly send?: Readonly<Record<string, string>>;
  /** Members of the target's entry in `targets`. */
  readonly targets?: Readonly<Record<string, string>>;
}

/**
 * The port every target implements (cloud workers, desktop apps, whatever comes next). Methods
 * reject only with a `SessionFailure` for the codes their TSDoc lists; anything else is a bug.
 * The caller has already validated inputs, checked policy and found the session in the ledger
 * (so a foreign or unknown id never reaches a target). Session rows are the core's: a target
 * reports what happened and the core records it (`createRemoteSessions`); a target with no state
 * of its own needs no SQL. A target that does keep state (desktop: its task store) may also write
 * the row through the `SessionLedger` it is given, compare-and-set like the core.
 */
export interface Target {
  readonly specificationVersion: "v1";
  /** The `target` value of sessions this target serves (`cloud`, `desktop`): lowercase, [a-z][a-z0-9_]*. */
  readonly name: string;
  /** How a person sees it: "Cloud", "Desktop". */
  readonly label: string;
  /** Other names callers use for this target (OpenWork's `registered` for desktops): they name it in `target`. */
  readonly aliases?: readonly string[];
  /** One line for the `target` argument's description. */
  readonly description?: string;
  /**
   * Extra `create` arguments only this target takes (a zod shape: desktop's `deliverBy`, cloud's
   * `workspaceId`). The capability adds them to create's schema and refuses them for
   * other targets; the target receives them in `input.extra`.
   */
  readonly createArguments?: Readonly<Record<string, ZodType>>;
  /**
   * Other names callers use for some of `createArguments` (`{ alias: "argument" }`): each is
   * accepted in its place, and naming one argument twice with different values is refused.
   */
  readonly createArgumentAliases?: Readonly<Record<string, string>>;
  /** The members this target adds to its results (`fields`), by result. */
  readonly resultFields?: ResultFields;
  /**
   * This target's own error codes with their rules (`defineErrorCodes(...).codes`): the codes its
   * methods reject with besides the core's, and `availabilityRules.unavailableError`'s.
   */
  readonly errorCodes?: ErrorCodeTable;
  readonly availabilityRules?: AvailabilityRules;
  /** Whether the member can use this target now, and its machines if it has any. */
  availability(call: TargetCall): Promise<TargetAvailability>;
  /**
   * Starts the session the core reserved (`input.sessionId`, state `queued`).
   * Codes: `unknown_workspace`, and those of the target's `errorCodes` (why it cannot start it).
   */
  create(call: TargetCall, input: TargetCreateInput): Promise<CreateOutcome>;
  /**
   * Whether `send` runs the follow-up with `input.model` (OpenWork's `model` on a send). Default
   * false: the capability then tells the caller it ignored `model`, and passes none.
   */
  readonly sendTakesModel?: boolean;
  /** Sends a follow-up prompt. Codes: `unknown_session`, `session_not_active`, plus create's. */
  send(call: TargetCall, session: LedgerSession, input: SendInput & { model?: Model }): Promise<SendOutcome>;
  /** A transcript slice; with `waitMs`, waits for something newer than the cursor. Codes: `unknown_session`, `invalid_capability_arguments` (cursor). */
  read(call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult>;
  /** Stops the current turn (or a not yet delivered task). Codes: `unknown_session`. */
  stop(call: TargetCall, session: LedgerSession): Promise<StopOutcome>;
  /**
   * Answers what a `waiting_input` session asks (a permission, a question). The core makes it
   * exactly-once per request; a target only delivers it. Codes: `input_not_pending` (no such
   * request waits, or the answer does not fit it), plus read's and the target's own.
   */
  respond(call: TargetCall, session: LedgerSession, input: EngineRespondInput): Promise<RespondOutcome>;
  /**
   * A new prompt id in this target's own format. An idempotent send reserves one before its
   * first attempt and passes it to every retry as `messageId`.
   */
  newMessageId(): string;
  /**
   * The session a receipt of this target names, for this member only, or null: a desktop
   * create's `commandId`, a relayed request's `requestId` (OpenWork's callers read and stop by
   * them). Optional: a target that hands out no receipts has none to find.
   */
  sessionOfReceipt?(call: TargetCall, receipt: Receipt): Promise<string | null>;
  /**
   * Follows again a budgeted turn the ledger shows running, which this process did not start: a
   * gateway that starts calls it for the turns `runningBudgeted` finds, since the follower that
   * checked their budget lived in the process that stopped. Answers whether it follows it (the
   * session names no owner it can act as, or its worker is not up: false). Optional: a target
   * whose spend arrives by itself (a desktop's runner posts it) needs none.
   */
  followRunning?(session: LedgerSession, referenceId: string): Promise<boolean>;
}

/** A target's receipt for work it queued: the command that creates a session, or a request about one. */
export type Receipt = { commandId: string; requestId?: never } | { requestId: string; commandId?: never };

/** What `create` receives: the common inputs, the reserved session id, and the target's own arguments. */
export interface TargetCreateInput {
  sessionId: string;
  /** The session's depth in its spawn tree (0: one a person started); what a session credential for its engine names. */
  depth?: number;
  /**
   * Its spend is checked against a budget (its own or one above it): a target that sums spend
   * from its engine's messages reports it as each step ends, not only when the turn does.
   */
  budgeted?: boolean;
  title: string;
  prompt?: string;
  model?: Model;
  /** Values of the target's `createArguments`, validated. */
  extra: Record<string, unknown>;
  /**
   * What an earlier attempt of this create (a retry of the same idempotency key) bound to the
   * session: the target finds what it made there and finishes it instead of making a second.
   * Absent when nothing was bound. A target keeping its own records (desktop tasks) looks there.
   */
  earlier?: { targetSessionId: string | null; targetRef: Record<string, unknown> };
  /**
   * Records on the reserved row what the target made (its session id, references) and that it
   * took the row, before it does anything that cannot be undone (sending the prompt), so a retry
   * finds it. Rejects (`session_not_active`) when the row was stopped or removed meanwhile.
   */
  bind(binding: { targetSessionId?: string; targetRef?: Record<string, unknown> }): Promise<void>;
}
