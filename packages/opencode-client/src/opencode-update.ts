import type { OpencodeError, ToolState } from "./opencode-schemas.js";

/** A permission waiting for the human, as a person reads it (not yet bounded). */
export interface DescribedPermission {
  kind: "permission";
  id: string;
  title: string;
  detail: string;
}

/** A question waiting for the human, as a person reads it (not yet bounded); `questions` is how many answers it takes. */
export interface DescribedQuestion {
  kind: "question";
  id: string;
  title: string;
  detail: string;
  options: { label: string; description?: string }[];
  questions: number;
}

export type DescribedRequest = DescribedPermission | DescribedQuestion;

/** The session a session's update is about. */
interface OfSession {
  sessionId: string;
}

/**
 * What one event of opencode's stream says, in the words a reader of a turn uses. Every update
 * but `connected` names its session; events nobody reads (`session.updated`, `session.diff`, …)
 * give none.
 */
export type OpencodeUpdate =
  /** The stream is up: what follows is live. */
  | { type: "connected" }
  /** A text part was created: its deltas follow, and a reader that heard this hears its whole text. */
  | (OfSession & { type: "text-part"; messageId: string; partId: string })
  /** Text added to a part (`field: "text"`), whatever the part's kind. */
  | (OfSession & { type: "text-delta"; messageId: string; partId: string | undefined; delta: string })
  /** A tool call was created or moved on. */
  | (OfSession & { type: "tool"; messageId: string; callId: string; tool: string; state: ToolState })
  /** A step of a reply ended, with what it used (`cost` in dollars, when the provider priced it). */
  | (OfSession & { type: "usage"; messageId: string; partId: string; inputTokens: number; outputTokens: number; cost: number | undefined })
  /** A message was stored or changed; `ended` when it is a reply that completed or failed. */
  | (OfSession & { type: "message"; messageId: string; role: string; ended: boolean })
  /** The session failed (`error` null when the event's error has no shape known here). */
  | (OfSession & { type: "error"; error: OpencodeError | null })
  /** The session's status: `idle`, `busy`, or `retry` with the attempt, the provider's message and the next try (epoch ms). */
  | (OfSession & { type: "status"; status: { type: string; attempt?: number | undefined; message?: string | undefined; next?: number | undefined } })
  /** The session is idle: its turn is over. */
  | (OfSession & { type: "idle" })
  /** A permission or question now waits (`request` null when it has no shape known here). */
  | (OfSession & { type: "asked"; request: DescribedRequest | null })
  /** A permission or question was answered or dismissed (`requestId` null when the event does not say which). */
  | (OfSession & { type: "resolved"; requestId: string | null });

/** An update about one session (every update but `connected`). */
export type OpencodeSessionUpdate = Exclude<OpencodeUpdate, { type: "connected" }>;
