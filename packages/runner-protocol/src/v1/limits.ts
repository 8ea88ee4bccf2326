import { SESSION_LIMITS as SESSION } from "@openwork/remote-session-core/wire";

/**
 * Size limits of the v1 wire contract. Every string and array in a message has one, and the
 * gateway's tables use the same numbers, so a value the schema accepts always fits. What a
 * session's caller also sends (title, prompt, model, answers, what a request shows) is the
 * session model's own limit, one number for both.
 */
export const LIMITS = {
  /** Task, session and message ids minted by the gateway. */
  id: 160,
  /** A runner's own install id (a persisted UUID in the Electron app). */
  runnerIdMin: 8,
  runnerId: 160,
  /** Ids the runner's local engine mints (opencode session ids, workspace ids). */
  localId: 240,
  runnerName: 120,
  appVersion: 80,
  capability: 64,
  capabilities: 16,
  title: SESSION.title,
  prompt: SESSION.prompt,
  providerId: SESSION.providerId,
  modelId: SESSION.modelId,
  modelVariant: SESSION.modelVariant,
  /** One streamed piece of assistant text. */
  deltaText: 16_000,
  /** The whole text of one assistant message. */
  finalText: 100_000,
  toolName: 160,
  /** A permission or question request's id, as the runner's engine mints it. */
  requestId: SESSION.requestId,
  /** A request's one-line title and each option's label. */
  requestTitle: SESSION.pendingTitle,
  /** What a request is about (the command, the question). */
  requestDetail: SESSION.pendingDetail,
  requestOptions: SESSION.pendingOptions,
  /** The text that answers a question. */
  answerText: SESSION.answerText,
  toolSummary: 2_000,
  errorCode: 60,
  errorMessage: 2_000,
  summary: 4_096,
  reason: 500,
  eventsPerPost: 100,
  /** Tokens one step may report in or out: a billion, past any model's context. */
  stepTokens: 1_000_000_000,
  /** What one step may report it cost, in micro-dollars: a million dollars. */
  stepCostMicros: 1_000_000_000_000,
  workItems: 50,
  /** Largest request body a runner route reads; the runner splits event posts below it. */
  bodyBytes: 1_048_576,
  /** Highest event sequence of one attempt. */
  sequence: 1_000_000,
  audience: 2_048,
  token: 4_096,
  /** Workspaces one inventory lists (OpenWork's number). */
  inventoryWorkspaces: 50,
  /** A workspace's shown name. */
  workspaceName: 120,
  /** An engine's id (`opencode`): what a create names in `engine`. */
  engineId: 60,
  /** Models one workspace of an inventory lists (OpenWork's number). */
  inventoryModels: 200,
  /** A model's shown name. */
  modelName: 200,
  /** The JSON bytes a whole inventory may take (OpenWork's cap). */
  inventoryBytes: 262_144,
} as const;
