import { type DescribedRequest, type OpencodeError, type OpencodeSessionUpdate, readOpencodeEvent, type ToolState } from "@openwork/opencode-client";
import { followSse, SseSilentError, type SseTimers } from "@openwork/remote-session-core/wire";
import type { EngineProgress, EngineRequest } from "./local-engine.js";

/** An error that ends an opencode turn, as its events and messages carry it. */
export type EngineError = Pick<OpencodeError, "name" | "data">;

interface Todo {
  content?: string | undefined;
  status?: string | undefined;
}

const SUMMARY_CHARS = 300;
const TOOL_STATUSES = new Set(["pending", "running", "completed", "error"]);
const TODO_MARKS: Record<string, string> = { completed: "✓", in_progress: "…", cancelled: "✗" };

/**
 * Follows one session's turn on opencode's event stream, as progress: text deltas of reply
 * messages, tool calls (a todo list is the `todowrite` tool's summary), usage per step,
 * permissions and questions asked and resolved; then its end (idle after busy) or its error.
 */
export function followTurn(
  response: Response,
  sessionId: string,
  onProgress: (progress: EngineProgress) => void,
  // opencode beats every 10 s: a stream silent for 30 s is a dead engine or a half-open socket.
  stream: { silenceMs?: number; timers?: SseTimers } = {},
) {
  let connected!: () => void;
  let ended!: (error: EngineError | null) => void;
  const result = {
    connected: new Promise<void>((resolve) => (connected = resolve)),
    ended: new Promise<EngineError | null>((resolve) => (ended = resolve)),
  };
  const textParts = new Set<string>();
  const toolSeen = new Map<string, string>();
  const stepsReported = new Set<string>();
  let busy = false;
  let error: EngineError | null = null;
  const onUpdate = (update: OpencodeSessionUpdate) => {
    switch (update.type) {
      case "text-part":
        textParts.add(update.partId);
        return;
      case "tool": {
        const progress = toolProgress(update.callId, update.tool, update.state);
        const key = JSON.stringify(progress);
        if (progress && toolSeen.get(update.callId) !== key) {
          toolSeen.set(update.callId, key);
          onProgress(progress);
        }
        return;
      }
      case "usage": {
        // A step reports once, however often its part is announced again.
        if (stepsReported.has(update.partId)) return;
        stepsReported.add(update.partId);
        const cost = update.cost !== undefined && update.cost > 0 ? { costMicros: Math.round(update.cost * 1_000_000) } : {};
        return onProgress({ type: "usage", inputTokens: update.inputTokens, outputTokens: update.outputTokens, ...cost });
      }
      // Deltas of a text part only: reasoning parts stream through the same event.
      case "text-delta":
        if (update.partId !== undefined && textParts.has(update.partId)) onProgress({ type: "text", messageId: update.messageId, delta: update.delta });
        return;
      case "asked":
        return update.request ? onProgress({ type: "asked", request: requestOf(update.request) }) : undefined;
      case "resolved":
        return update.requestId ? onProgress({ type: "resolved", requestId: update.requestId }) : undefined;
      case "error":
        error ??= update.error ? { name: update.error.name, ...(update.error.data ? { data: update.error.data } : {}) } : { name: "UnknownError" };
        return;
      case "status":
        if (update.status.type !== "idle") busy = true;
        return;
      case "idle":
        if (busy || error) ended(error);
        return;
    }
  };
  const onMessage = (message: { data: string }) => {
    const update = readOpencodeEvent(message.data);
    if (update?.type === "connected") return connected();
    if (update && update.sessionId === sessionId) onUpdate(update);
  };
  const body = response.body;
  void followSse({
    open: async () => body ?? Promise.reject(new Error("no event stream")),
    onMessage,
    silenceMs: stream.silenceMs ?? 30_000,
    ...(stream.timers ? { timers: stream.timers } : {}),
  })
    // Closed by us once the turn ended, or the engine went away (or went silent).
    .catch((reason: unknown) => reason)
    .then((reason) => {
      connected();
      const why = SseSilentError.isInstance(reason) ? "went silent" : "closed";
      ended(error ?? { name: "EngineStreamClosed", data: { message: `the engine's event stream ${why} before the turn ended` } });
    });
  return result;
}

/** A tool call in one short line: what it does while it runs, what came of it once it ended. */
function toolProgress(callId: string, name: string, state: ToolState): EngineProgress | null {
  if (!TOOL_STATUSES.has(state.status)) return null;
  const status = state.status as "pending" | "running" | "completed" | "error";
  const todos = state.metadata?.todos ?? (Array.isArray(state.input?.todos) ? (state.input.todos as Todo[]) : undefined);
  const summary =
    status === "error"
      ? state.error
      : name === "todowrite" && todos
        ? todos.map((t) => `${TODO_MARKS[t.status ?? ""] ?? "☐"} ${t.content ?? ""}`).join("; ")
        : status === "completed"
          ? [state.title, state.output?.trim()].filter(Boolean).join(": ")
          : describeInput(state.input);
  return { type: "tool", callId, name, status, ...(summary ? { summary: summary.slice(0, SUMMARY_CHARS) } : {}) };
}

function describeInput(input: Record<string, unknown> | undefined): string | undefined {
  if (!input || Object.keys(input).length === 0) return undefined;
  for (const key of ["command", "filePath", "pattern", "url", "description"]) if (typeof input[key] === "string") return input[key];
  return JSON.stringify(input);
}

/** A permission or question as the protocol reports it, bounded. */
function requestOf(request: DescribedRequest): EngineRequest {
  const bounded = { requestId: request.id, kind: request.kind, title: request.title.slice(0, 200), detail: request.detail.slice(0, 2_000) };
  if (request.kind === "permission") return bounded;
  const options = request.options
    .slice(0, 20)
    .map((o) => ({ label: o.label.slice(0, 200), ...(o.description ? { description: o.description.slice(0, 200) } : {}) }));
  return { ...bounded, ...(options.length ? { options } : {}) };
}
