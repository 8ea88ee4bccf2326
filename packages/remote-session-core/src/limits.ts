/** Argument limits, OpenWork's numbers; the ledger's SQL checks use the same ones. */
export const SESSION_LIMITS = {
  title: 120,
  prompt: 100_000,
  idempotencyKey: 160,
  workspaceId: 240,
  providerId: 160,
  modelId: 160,
  modelVariant: 60,
  cursor: 512,
  readLimitMax: 100,
  readLimitDefault: 20,
  listLimitMax: 50,
  listLimitDefault: 20,
  /** The longest a `read` may wait for something new. */
  waitMsMax: 25_000,
  /** Text of one transcript message in a read; longer text is cut and marked `truncated`. */
  messageText: 4_000,
  /** `finalAssistantText` of a read. */
  finalText: 20_000,
  toolCallsPerMessage: 50,
  /** A permission or question request's id (the target's own, e.g. opencode's `per_…`/`que_…`). */
  requestId: 160,
  /** The text that answers a question. */
  answerText: 10_000,
  /** `pending.title` and each option's label of a request waiting for the human. */
  pendingTitle: 200,
  /** `pending.detail`: what the request is about (the command, the full question). */
  pendingDetail: 2_000,
  pendingOptions: 20,
} as const;

export const DEFAULT_TITLE = "Remote session";
