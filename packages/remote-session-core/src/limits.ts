/** Argument limits, OpenWork's numbers; the ledger's SQL checks use the same ones. */
export const SESSION_LIMITS = {
  title: 120,
  prompt: 100_000,
  idempotencyKey: 160,
  workspaceId: 240,
  runner: 160,
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
} as const;

export const DEFAULT_TITLE = "Remote session";
