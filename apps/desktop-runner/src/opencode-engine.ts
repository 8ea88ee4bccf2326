import {
  MessagesSchema,
  OpencodeSessionSchema,
  type PermissionReplyRequest,
  PermissionRequestsSchema,
  promptAsyncBody,
  type QuestionReplyRequest,
  QuestionRequestsSchema,
} from "@openwork/opencode-client";
import type { Answer } from "@openwork/runner-protocol";
import { z } from "zod";
import type { LocalEngine } from "./local-engine.js";
import { followTurn } from "./opencode-turn.js";

/**
 * An engine over a local opencode server's HTTP API (what the desktop app runs): sessions are
 * real, visible opencode sessions. A prompt goes in with `prompt_async` while the runner follows
 * the engine's event stream (`followTurn`), so text, tool calls, usage and what the turn asks the
 * human reach the gateway as they happen; an error that ends the turn fails it, and stop aborts
 * the engine's turn. The last reply is read from the message list once the session is idle.
 * Answers go through opencode's permission and question reply routes.
 */
/** The name of the gateway's MCP entry in opencode: its tools show as `openwork_<tool>`. */
export const MCP_ENTRY = "openwork";

export function createOpencodeEngine(options: { url: string; directory?: string; fetch?: typeof fetch }): LocalEngine {
  const call = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  // opencode serves each directory as its own instance: a session made in a worktree is reached
  // through that directory. Sessions this engine made elsewhere than its own directory:
  const directories = new Map<string, string>();
  const headersFor = (directory: string | undefined) => ({ "content-type": "application/json", ...(directory ? { "x-opencode-directory": directory } : {}) });
  const send = (method: string, path: string, body?: unknown, signal?: AbortSignal, directory = options.directory) =>
    call(`${base}${path}`, {
      method,
      headers: headersFor(directory),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  const request = async (method: string, path: string, body?: unknown, signal?: AbortSignal, directory?: string): Promise<Response> => {
    const response = await send(method, path, body, signal, directory ?? options.directory);
    if (!response.ok) throw new Error(`opencode answered ${response.status} to ${method} ${path}`);
    return response;
  };
  const read = async <S extends z.ZodType>(schema: S, method: string, path: string, body?: unknown, directory?: string): Promise<z.infer<S>> => {
    const parsed = schema.safeParse(await (await request(method, path, body, undefined, directory)).json().catch(() => undefined));
    if (!parsed.success) throw new Error(`opencode answered ${method} ${path} in an unexpected shape`);
    return parsed.data;
  };

  return {
    engineId: "opencode",

    models: async () => {
      const { providers, default: defaults } = await read(ProvidersSchema, "GET", "/config/providers");
      const models = providers.flatMap((p) =>
        Object.entries(p.models).map(([id, m]) => ({ providerId: p.id, modelId: m.id ?? id, ...(m.name ? { name: m.name.slice(0, 200) } : {}) })),
      );
      const [providerId, modelId] = Object.entries(defaults ?? {})[0] ?? [];
      return { models: models.slice(0, 200), defaultModel: providerId && modelId ? { providerId, modelId } : null };
    },

    createSession: async ({ title, directory }) => {
      const { id } = await read(OpencodeSessionSchema, "POST", "/session", { title }, directory ?? undefined);
      if (directory && directory !== options.directory) directories.set(id, directory);
      return id;
    },

    // One entry per opencode instance (a directory): the session's own, registered again before
    // each of its turns. opencode connects at once and offers its tools to the next model call.
    useMcp: async ({ sessionId, url, authorization }) => {
      const config = { type: "remote", url, headers: { authorization }, oauth: false, enabled: true };
      await request("POST", "/mcp", { name: MCP_ENTRY, config }, undefined, directories.get(sessionId));
    },

    prompt: async ({ sessionId, messageId, text, signal, onProgress }) => {
      const session = `/session/${encodeURIComponent(sessionId)}`;
      const directory = directories.get(sessionId);
      const abort = () => void request("POST", `${session}/abort`, {}, undefined, directory).catch(() => {});
      signal.addEventListener("abort", abort, { once: true });
      const stream = new AbortController();
      try {
        const turn = followTurn(await request("GET", "/event", undefined, stream.signal, directory), sessionId, onProgress);
        await turn.connected;
        // opencode's message ids start with "msg"; the gateway's do, so a replayed prompt is recognised.
        await request(
          "POST",
          `${session}/prompt_async`,
          promptAsyncBody({ text, ...(messageId.startsWith("msg") ? { messageId } : {}) }),
          undefined,
          directory,
        );
        const error = await turn.ended;
        const messages = await read(MessagesSchema, "GET", `${session}/message`, undefined, directory);
        const reply = messages.findLast((m) => m.info.role === "assistant");
        const answer = (reply?.parts ?? [])
          .filter((p) => p.type === "text")
          .map((p) => p.text ?? "")
          .join("");
        const failure = error ?? reply?.info.error;
        if (failure && !signal.aborted) throw new Error(`${failure.name}: ${failure.data?.message ?? ""}`.split("\n")[0]!.slice(0, 500));
        return { messageId: reply?.info.id ?? messageId, text: answer };
      } finally {
        stream.abort();
        signal.removeEventListener("abort", abort);
      }
    },

    respond: async ({ sessionId, requestId, answer }) => {
      const directory = directories.get(sessionId);
      const [permissions, questions] = await Promise.all([
        read(PermissionRequestsSchema, "GET", "/permission", undefined, directory),
        read(QuestionRequestsSchema, "GET", "/question", undefined, directory),
      ]);
      const mine = (r: { id: string; sessionID: string }) => r.id === requestId && r.sessionID === sessionId;
      const question = questions.find(mine);
      const reply = replyOf(answer, permissions.some(mine), question?.questions.length);
      if (!reply) return false;
      const response = await send("POST", `/${reply.route}/${encodeURIComponent(requestId)}/reply`, reply.body, undefined, directory ?? options.directory);
      // Answered meanwhile (in the app): opencode no longer has it.
      if (response.status === 404) return false;
      if (!response.ok) throw new Error(`opencode answered ${response.status} to a ${reply.route} reply`);
      return true;
    },
  };
}

/** opencode's `GET /config/providers`: its providers with their models, and each provider's default model. */
const ProvidersSchema = z.looseObject({
  providers: z.array(
    z.looseObject({
      id: z.string().min(1).max(160),
      models: z.record(z.string(), z.looseObject({ id: z.string().min(1).max(160).optional(), name: z.string().optional() })),
    }),
  ),
  default: z.record(z.string(), z.string()).optional(),
});

/** The reply route and body for an answer, or null when the answer does not fit what waits. */
function replyOf(
  answer: Answer,
  isPermission: boolean,
  questionCount: number | undefined,
): { route: "permission"; body: PermissionReplyRequest } | { route: "question"; body: QuestionReplyRequest } | null {
  if ("permission" in answer) return isPermission ? { route: "permission", body: { reply: answer.permission } } : null;
  if (questionCount === undefined) return null;
  return { route: "question", body: { answers: Array.from({ length: questionCount }, () => [answer.text]) } };
}
