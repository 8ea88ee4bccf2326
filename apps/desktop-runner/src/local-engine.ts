import type { Answer, InventoryModel, Model, TaskEventInput } from "@openwork/runner-protocol";

/** What a request waiting on the human looks like, as the protocol carries it. */
export type EngineRequest = Extract<TaskEventInput, { type: "input.requested" }>["payload"];

/** What an engine reports while a turn runs. */
export type EngineProgress =
  /** A piece of one reply message's text. */
  | { type: "text"; messageId: string; delta: string }
  /** A tool call's state, repeated as it changes (todo lists are the `todowrite` tool's calls). */
  | { type: "tool"; callId: string; name: string; status: "pending" | "running" | "completed" | "error"; summary?: string }
  /** Tokens a step of the turn used. */
  | { type: "usage"; inputTokens: number; outputTokens: number; costMicros?: number }
  /** The turn waits on the human. */
  | { type: "asked"; request: EngineRequest }
  /** A request was answered (here or in the app) or withdrawn. */
  | { type: "resolved"; requestId: string };

/** The desktop's local chat engine, as the runner drives it. The Electron app's is OpenWork's own. */
export interface LocalEngine {
  /** Which engine this is (`opencode`), as the runner's inventory reports it and a create names it. */
  readonly engineId: string;
  /** The models it can run, and the one it runs by default, for the inventory. */
  models(): Promise<{ models: InventoryModel[]; defaultModel: Model | null }>;
  /**
   * Makes a visible local session and returns its id. `directory` is where it works (a
   * workspace's folder, or a fresh worktree of it); null: the engine's own.
   */
  createSession(input: { title: string; workspaceId: string | null; directory: string | null }): Promise<string>;
  /**
   * Runs one prompt in a session, reporting progress as it happens, and resolves with the last
   * reply message. Honours `signal` (stop, lease loss) by ending early.
   */
  prompt(input: {
    sessionId: string;
    messageId: string;
    text: string;
    signal: AbortSignal;
    onProgress(progress: EngineProgress): void;
  }): Promise<{ messageId: string; text: string }>;
  /**
   * Gives the session's agent the gateway's MCP entry (its URL and the session's own credential),
   * before a turn runs and again when a fresher one arrives: what the agent creates through it is
   * recorded as spawned by the session. Optional: an engine without it runs turns without MCP.
   */
  useMcp?(input: { sessionId: string; url: string; authorization: string }): Promise<void>;
  /** Answers a request a running turn of the session waits on; false when it waits on no such request. */
  respond(input: { sessionId: string; requestId: string; answer: Answer }): Promise<boolean>;
}
