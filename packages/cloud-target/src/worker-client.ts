import { SessionFailure } from "@openwork/remote-session-core";
import { formatTraceparent } from "@openwork/remote-session-core/internal";
import { fail } from "./cloud-errors.js";
import { trace } from "@opentelemetry/api";
import ky, { HTTPError } from "ky";
import { z } from "zod";
import { MessagesSchema, OpencodeSessionSchema, PermissionRequestsSchema, promptAsyncBody, QuestionRequestsSchema } from "@openwork/opencode-client";
import { OpencodeErrorSchema, StatusMapSchema } from "@openwork/opencode-client/internal";
import { OpenworkErrorSchema, WorkspacesSchema } from "./openwork-schemas.js";
import { TRANSIENT_READ_RETRY } from "./transient-retry.js";
import type { ReadyWorker } from "./worker-resolver.js";

/** A prompt as opencode's `prompt_async` takes it. */
export interface PromptBody {
  text: string;
  messageID: string;
  model?: { providerId: string; modelId: string; variant?: string | undefined } | undefined;
}

/** One rule of an opencode session's permission ruleset; the last rule whose `permission` wildcard matches a tool name decides. */
export interface PermissionRule {
  permission: string;
  pattern: string;
  action: "allow" | "deny" | "ask";
}

/** How the engine holds an MCP entry after a registration: `connected`, or why not (`failed` with `error`, `disabled`, …). */
export interface McpEntryStatus {
  status: string;
  error?: string | undefined;
}

// opencode answers `POST /mcp` and `GET /mcp` with the status of every entry, by name.
const McpStatusMapSchema = z.record(z.string(), z.looseObject({ status: z.string(), error: z.string().optional() }));
const SessionPermissionSchema = z.looseObject({
  permission: z.array(z.looseObject({ permission: z.string(), pattern: z.string(), action: z.string() })).optional(),
});

/** The few routes of openwork-server's native opencode mount the cloud target uses. */
export interface WorkerClient {
  workspaces(): Promise<z.infer<typeof WorkspacesSchema>>;
  /** A new session of the workspace's engine, restricted by `permission` (the engine keeps it with the session). */
  createSession(workspaceId: string, title: string, permission?: PermissionRule[]): Promise<{ id: string }>;
  /** The rules a session was given (none for one created without). */
  sessionPermission(workspaceId: string, sessionId: string): Promise<PermissionRule[]>;
  /** Appends `rules` to a session's ruleset (opencode's `PATCH /session/{id}` appends). */
  addSessionPermission(workspaceId: string, sessionId: string, rules: PermissionRule[]): Promise<void>;
  deleteSession(workspaceId: string, sessionId: string): Promise<void>;
  promptAsync(workspaceId: string, sessionId: string, prompt: PromptBody): Promise<void>;
  /**
   * Registers the workspace engine's MCP entry `name`: a remote server at `url`, sent
   * `authorization`, OAuth off. It replaces only an entry of the same name, whose open calls the
   * engine then cuts. Answers how the engine holds it: a server it could not reach is still a
   * 200, with status `failed`.
   */
  putMcpEntry(workspaceId: string, name: string, entry: { url: string; authorization: string }): Promise<McpEntryStatus>;
  messages(workspaceId: string, sessionId: string): Promise<z.infer<typeof MessagesSchema>>;
  status(workspaceId: string): Promise<z.infer<typeof StatusMapSchema>>;
  abort(workspaceId: string, sessionId: string): Promise<void>;
  /** Tool calls waiting for approval and questions waiting for an answer, every session of the workspace. */
  requests(workspaceId: string): Promise<{ permissions: z.infer<typeof PermissionRequestsSchema>; questions: z.infer<typeof QuestionRequestsSchema> }>;
  /** Answers a permission request; false when the engine no longer has it. */
  replyPermission(workspaceId: string, requestId: string, reply: "once" | "always" | "reject"): Promise<boolean>;
  /** Answers a question request, one list of chosen labels (or free text) per question; false when it is gone. */
  replyQuestion(workspaceId: string, requestId: string, answers: string[][]): Promise<boolean>;
}

/**
 * The active span's W3C trace context as the `traceparent` header (the capability call's, when the
 * host records traces), so the worker's own spans join the prompt's trace; none otherwise.
 */
function traceHeaders(): Record<string, string> {
  const traceparent = formatTraceparent(trace.getActiveSpan()?.spanContext());
  return traceparent ? { traceparent } : {};
}

/**
 * A client of one worker (ky): the client token as bearer on every request, a timeout per request,
 * redirects refused, both layers' error bodies mapped to session errors. A 404 is
 * `unknown_workspace` when the worker names the workspace, else `unknown_session`; a refused
 * credential is `cloud_runtime_failed` with the human step; timeouts, network errors and 5xx are
 * `cloud_runtime_unreachable`. Reads are retried by ky (`TRANSIENT_READ_RETRY`), writes never.
 */
export function createWorkerClient(worker: ReadyWorker, options: { fetch?: typeof fetch; timeoutMs?: number } = {}): WorkerClient {
  const api = ky.create({
    timeout: options.timeoutMs ?? 10_000,
    retry: TRANSIENT_READ_RETRY,
    redirect: "error",
    headers: { authorization: `Bearer ${worker.clientToken}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const base = worker.url.replace(/\/+$/, "");
  const mount = (workspaceId: string) => `${base}/workspace/${encodeURIComponent(workspaceId)}/opencode`;

  const call = async (method: string, url: string, body?: unknown): Promise<Response> => {
    let response: Response;
    try {
      response = await api(url, { method, headers: traceHeaders(), ...(body === undefined ? {} : { json: body }) });
    } catch (error) {
      if (error instanceof HTTPError) return failFrom(error.response, await error.response.text().catch(() => ""));
      return fail("cloud_runtime_unreachable", `the cloud worker did not answer (${error instanceof Error ? error.name : "error"})`, {
        retryAfterMs: 5_000,
      });
    }
    return response;
  };
  const json = async <S extends z.ZodType>(schema: S, method: string, url: string, body?: unknown): Promise<z.infer<S>> => {
    const response = await call(method, url, body);
    const parsed = schema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) return fail("cloud_runtime_failed", `the cloud worker answered ${method} ${new URL(url).pathname} in an unexpected shape`);
    return parsed.data;
  };
  const session = (workspaceId: string, sessionId: string) => `${mount(workspaceId)}/session/${encodeURIComponent(sessionId)}`;

  return {
    workspaces: () => json(WorkspacesSchema, "GET", `${base}/workspaces`),
    createSession: (workspaceId, title, permission) =>
      json(OpencodeSessionSchema, "POST", `${mount(workspaceId)}/session`, { title, ...(permission ? { permission } : {}) }),
    sessionPermission: async (workspaceId, sessionId) =>
      ((await json(SessionPermissionSchema, "GET", session(workspaceId, sessionId))).permission ?? []) as PermissionRule[],
    addSessionPermission: async (workspaceId, sessionId, rules) => void (await call("PATCH", session(workspaceId, sessionId), { permission: rules })),
    deleteSession: async (workspaceId, sessionId) => void (await call("DELETE", session(workspaceId, sessionId))),
    promptAsync: async (workspaceId, sessionId, prompt) => {
      await call(
        "POST",
        `${session(workspaceId, sessionId)}/prompt_async`,
        promptAsyncBody({ text: prompt.text, messageId: prompt.messageID, model: prompt.model }),
      );
    },
    putMcpEntry: async (workspaceId, name, { url, authorization }) => {
      const config = { type: "remote", url, headers: { authorization }, oauth: false, enabled: true };
      const statuses = await json(McpStatusMapSchema, "POST", `${mount(workspaceId)}/mcp`, { name, config });
      return statuses[name] ?? { status: "missing" };
    },
    messages: (workspaceId, sessionId) => json(MessagesSchema, "GET", `${session(workspaceId, sessionId)}/message`),
    status: (workspaceId) => json(StatusMapSchema, "GET", `${mount(workspaceId)}/session/status`),
    abort: async (workspaceId, sessionId) => void (await call("POST", `${session(workspaceId, sessionId)}/abort`)),
    requests: async (workspaceId) => {
      const [permissions, questions] = await Promise.all([
        json(PermissionRequestsSchema, "GET", `${mount(workspaceId)}/permission`),
        json(QuestionRequestsSchema, "GET", `${mount(workspaceId)}/question`),
      ]);
      return { permissions, questions };
    },
    replyPermission: (workspaceId, requestId, reply) =>
      answered(call("POST", `${mount(workspaceId)}/permission/${encodeURIComponent(requestId)}/reply`, { reply })),
    replyQuestion: (workspaceId, requestId, answers) =>
      answered(call("POST", `${mount(workspaceId)}/question/${encodeURIComponent(requestId)}/reply`, { answers })),
  };
}

/** A reply route's answer: true, or false when the engine no longer has the request (its 404). */
async function answered(reply: Promise<Response>): Promise<boolean> {
  try {
    await reply;
    return true;
  } catch (error) {
    if (SessionFailure.isInstance(error) && error.error.error === "unknown_session") return false;
    throw error;
  }
}

function failFrom(response: Response, text: string): never {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const openwork = OpenworkErrorSchema.safeParse(body);
  const opencode = OpencodeErrorSchema.safeParse(body);
  const code = openwork.success ? openwork.data.code : opencode.success ? opencode.data.name : `http_${response.status}`;
  const detail = openwork.success ? openwork.data.message : opencode.success ? opencode.data.data?.message : undefined;
  const said = `the cloud worker answered ${response.status} ${code}${detail ? `: ${detail.slice(0, 200)}` : ""}`;
  if (response.status === 404 && code === "workspace_not_found") {
    return fail("unknown_workspace", "the cloud worker has no such workspace; call remote-session:targets");
  }
  if (response.status === 404) return fail("unknown_session", "no such session on the cloud worker; call remote-session:list");
  if (response.status === 401 || response.status === 403) {
    return fail("cloud_runtime_failed", `${said}: the worker refused the gateway's credentials`, {
      action: "Reconnect OpenWork Cloud for this organization, or ask an admin to check the gateway's access to cloud workers.",
    });
  }
  if (code === "opencode_unconfigured") return fail("cloud_runtime_waking", "the cloud worker is still starting its engine; retry", { retryAfterMs: 30_000 });
  if (response.status >= 500 || response.status === 429 || response.status === 408) {
    return fail("cloud_runtime_unreachable", said, { retryAfterMs: 5_000 });
  }
  return fail("cloud_runtime_failed", said);
}
