/** What an error code means for the caller: whether the same call may succeed later, and the member's step. */
export interface ErrorCodeRule {
  readonly retryable: boolean;
  /** The human step an error of this code carries when it names none of its own. */
  readonly action?: string;
}

/** Error codes and their rules: the core's own, or a target's (`Target.errorCodes`). */
export type ErrorCodeTable = Readonly<Record<string, ErrorCodeRule>>;

/**
 * The core's error vocabulary, with whether the same call may succeed later: the conditions of
 * every target (arguments, membership, sessions, idempotency, guards). A target adds the codes of
 * its own conditions in its own table (`defineErrorCodes`). Codes are den-api's wherever the
 * condition is the same; the last block holds ours, for conditions den-api has no code for.
 */
export const SESSION_ERROR_RULES = {
  // den-api's codes, with den-api's meanings.
  unknown_capability: { retryable: false },
  invalid_capability_arguments: { retryable: false },
  membership_required: { retryable: false },
  insufficient_mcp_scope: { retryable: false },
  unknown_session: { retryable: false },
  unknown_workspace: { retryable: false },
  model_unavailable: { retryable: false },
  remote_session_idempotency_conflict: { retryable: false },
  /** No command (a desktop create's receipt) of this member has that id. */
  unknown_command: { retryable: false, action: "find the session with remote-session:list; a command made before this gateway took over is not known here" },
  /** No request (a relayed read, send or stop) of this member has that id. */
  unknown_request: { retryable: false, action: "read the session by its sessionId (remote-session:list shows them)" },
  /** The host's audit log could not record the call before it ran, so nothing ran (den-api's audited actions fail closed). */
  audit_unavailable: { retryable: true },
  // Ours.
  rate_limited: { retryable: true },
  /** An identical call with the same idempotency key is still running elsewhere. */
  idempotency_in_progress: { retryable: true },
  session_not_active: { retryable: false },
  /** The session asks nothing under that request id (any more), or the answer does not fit it. */
  input_not_pending: { retryable: false },
  /** The target holds as many waiting turns of the session as it takes. */
  queue_full: { retryable: true },
  /** A session's engine asked for a session deeper in its spawn tree than the rules allow (`SpawnRules.maxDepth`). */
  spawn_depth_exceeded: { retryable: false, action: "do the work in this session instead of starting another one" },
  /** The spawning session keeps as many live sessions as the rules allow (`SpawnRules.maxLivePerSpawner`). */
  spawn_limit_reached: { retryable: true, action: "stop a session this one started, or wait for one to finish" },
  /** A session of the tree is paused at a budget: nothing new runs in it until the member raises the budget or stops it. */
  budget_paused: {
    retryable: false,
    action: "ask the member to raise the budget (remote-session:respond with answer.budget on the paused session's request) or to stop it",
  },
  /** Something failed that the caller cannot fix; the referenceId finds the log line. */
  internal_error: { retryable: true },
} as const satisfies ErrorCodeTable;

/** A code of the core's own vocabulary. */
export type CoreErrorCode = keyof typeof SESSION_ERROR_RULES;

/** Any error code: the core's, or one a target declares in its `errorCodes` (the wire carries both alike). */
export type SessionErrorCode = CoreErrorCode | (string & {});

/** The core's codes. */
export const SESSION_ERROR_CODES = Object.keys(SESSION_ERROR_RULES) as CoreErrorCode[];
