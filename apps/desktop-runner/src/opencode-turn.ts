import { followSse, SseSilentError, type SseTimers } from "@openwork/remote-session-core/wire";
import type { EngineProgress, EngineRequest } from "./local-engine.js";

/** An error that ends an opencode turn, as its events and messages carry it. */
export interface EngineError {
  name: string;
  data?: { message?: string };
}

interface ToolState {
  status?: string;
  input?: Record<string, unknown>;
  output?: string;
  title?: string;
  error?: string;
  metadata?: { todos?: Todo[] };
}
interface Todo {
  content?: string;
  status?: string;
}
interface Part {
  id?: string;
  type?: string;
  tool?: string;
  callID?: string;
  state?: ToolState;
  tokens?: { input?: number; output?: number };
  cost?: number;
}
interface Properties {
  sessionID?: string;
  messageID?: string;
  partID?: string;
  field?: string;
  delta?: string;
  part?: Part;
  error?: EngineError;
  status?: { type?: string };
  // permission.asked / question.asked
  id?: string;
  permission?: string;
  patterns?: string[];
  metadata?: { command?: unknown };
  questions?: { question: string; header: string; options?: { label: string; description?: string }[] }[];
  // *.replied / question.rejected
  requestID?: string;
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
  let busy = false;
  let error: EngineError | null = null;
  const onPart = (part: Part) => {
    if (part.type === "text" && part.id) textParts.add(part.id);
    if (part.type === "tool" && part.callID && part.tool) {
      const progress = toolProgress(part.callID, part.tool, part.state ?? {});
      const key = JSON.stringify(progress);
      if (progress && toolSeen.get(part.callID) !== key) {
        toolSeen.set(part.callID, key);
        onProgress(progress);
      }
    }
    if (part.type === "step-finish" && part.tokens) {
      const cost = typeof part.cost === "number" && part.cost > 0 ? { costMicros: Math.round(part.cost * 1_000_000) } : {};
      onProgress({ type: "usage", inputTokens: part.tokens.input ?? 0, outputTokens: part.tokens.output ?? 0, ...cost });
    }
  };
  const onMessage = (message: { data: string }) => {
    let event: { type: string; properties?: Properties };
    try {
      event = JSON.parse(message.data) as typeof event;
    } catch {
      return;
    }
    const p = event.properties ?? {};
    if (event.type === "server.connected") return connected();
    if (p.sessionID !== sessionId) return;
    switch (event.type) {
      case "message.part.updated":
        return p.part && onPart(p.part);
      case "message.part.delta":
        if (p.field === "text" && typeof p.delta === "string" && p.messageID && textParts.has(String(p.partID))) {
          onProgress({ type: "text", messageId: p.messageID, delta: p.delta });
        }
        return;
      case "permission.asked":
      case "question.asked": {
        const request = requestOf(event.type, p);
        return request && onProgress({ type: "asked", request });
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected":
        return p.requestID && onProgress({ type: "resolved", requestId: p.requestID });
      case "session.error":
        error ??= { name: p.error?.name ?? "UnknownError", ...(p.error?.data ? { data: p.error.data } : {}) };
        return;
      case "session.status":
        if (p.status?.type && p.status.type !== "idle") busy = true;
        return;
      case "session.idle":
        if (busy || error) ended(error);
        return;
    }
  };
  const body = response.body;
  void followSse({ open: async () => body ?? Promise.reject(new Error("no event stream")), onMessage, silenceMs: stream.silenceMs ?? 30_000, ...(stream.timers ? { timers: stream.timers } : {}) })
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
  if (!state.status || !TOOL_STATUSES.has(state.status)) return null;
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

/** A permission or question as the protocol reports it. */
function requestOf(type: string, p: Properties): EngineRequest | null {
  if (!p.id) return null;
  if (type === "permission.asked") {
    const detail = typeof p.metadata?.command === "string" ? p.metadata.command : (p.patterns ?? []).join("\n");
    return { requestId: p.id, kind: "permission", title: (p.permission ?? "permission").slice(0, 200), detail: detail.slice(0, 2_000) };
  }
  const first = p.questions?.[0];
  if (!first) return null;
  const options = (first.options ?? []).slice(0, 20).map((o) => ({ label: o.label.slice(0, 200), ...(o.description ? { description: o.description.slice(0, 200) } : {}) }));
  return {
    requestId: p.id,
    kind: "question",
    title: first.header.slice(0, 200),
    detail: p.questions!.map((q) => q.question).join("\n").slice(0, 2_000),
    ...(options.length ? { options } : {}),
  };
}
