import { createEchoMcp, type PermissionRule } from "./echo-mcp.js";
import { createEchoRequests } from "./echo-requests.js";
import { createEventBus } from "./event-bus.js";
import { createEchoSessions, type EchoSession, type EchoTiming } from "./echo-sessions.js";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const opencodeError = (status: number, name: string, message: string, extra: Record<string, unknown> = {}) =>
  json({ name, data: { message, ...extra } }, status);
const badRequest = (message: string) => opencodeError(400, "BadRequest", message, { kind: "Payload" });

/** A session as opencode lists it (the fields OpenWork Web shows; no cost, tokens or summary). */
const sessionInfo = (session: EchoSession) => ({
  id: session.id,
  slug: session.id.slice(4, 16),
  projectID: "global",
  directory: "/witness",
  title: session.title,
  version: "witness",
  time: session.time,
  ...(session.permission.length ? { permission: session.permission } : {}),
});

/** A permission ruleset as opencode validates it, or undefined. */
const ruleset = (value: unknown): PermissionRule[] | undefined =>
  Array.isArray(value) &&
  value.every((r) => typeof r?.permission === "string" && typeof r?.pattern === "string" && ["allow", "deny", "ask"].includes(r?.action))
    ? (value as PermissionRule[])
    : undefined;

interface PromptBody {
  parts?: { type: string; text?: string }[];
  messageID?: unknown;
  model?: { providerID: string; modelID: string };
  /** Deprecated in opencode, still honoured: replaces the session's ruleset, one rule per tool name. */
  tools?: Record<string, boolean>;
}

/**
 * A tiny in-memory engine with the subset of opencode's routes the cloud target uses (sessions,
 * messages, `prompt_async`, status, abort, the event stream, pending permissions and questions and
 * their replies, MCP entries and session permission rulesets), for `npm start` and tests without an
 * opencode binary. Each prompt is answered `echo: <prompt>`; see `createEchoSessions` for what it
 * reproduces of opencode and the prompt markers. Not a model, not opencode.
 */
export function createEchoEngine(options: Partial<EchoTiming> = {}) {
  const bus = createEventBus();
  const requests = createEchoRequests(bus);
  const mcp = createEchoMcp();
  const echo = createEchoSessions(bus, requests, mcp, { replyDelayMs: 150, slowWordMs: 300, retryMs: 2_000, ...options });
  // Every prompt_async it accepted, ids and model only: what tests count ("sent once").
  const received: ReceivedPrompt[] = [];

  const handle = async (request: Request, path: string): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (method === "GET" && (path === "/event" || path === "/global/event")) return bus.stream(request.signal);
    if (method === "GET" && path === "/session/status") {
      return json(Object.fromEntries([...echo.sessions.values()].filter((s) => s.status).map((s) => [s.id, s.status])));
    }
    if (method === "GET" && path === "/session") return json([...echo.sessions.values()].map(sessionInfo).reverse());
    if (method === "POST" && path === "/session") {
      const body = (await request.json().catch(() => ({}))) as { title?: string; permission?: unknown };
      const permission = ruleset(body.permission ?? []);
      if (!permission) return badRequest('Expected an array of rules\n  at ["permission"]');
      return json(sessionInfo(echo.create(body.title, permission)));
    }
    if (path === "/mcp" || path.startsWith("/mcp/")) return mcpRoute(request, path);
    const asked = /^\/(permission|question)(?:\/([^/]+)\/reply)?$/.exec(path);
    if (asked) return answerRoute(request, asked[1] as "permission" | "question", asked[2]);
    const match = /^\/session\/([^/]+)(?:\/(message|prompt_async|abort|todo)(?:\/([^/]+))?)?$/.exec(path);
    if (!match) return opencodeError(404, "NotFoundError", "Route not found");
    const [, rawId, action, messageId] = match;
    const id = decodeURIComponent(rawId!);
    const session = echo.sessions.get(id);
    // As opencode: aborting a session it does not know answers true; anything else is "not found".
    if (!session && action === "abort" && method === "POST") return json(true);
    if (!session) return opencodeError(404, "NotFoundError", `Session not found: ${id}`);
    if (!action && method === "GET") return json(sessionInfo(session));
    if (!action && method === "PATCH") {
      const body = (await request.json().catch(() => ({}))) as { title?: unknown; permission?: unknown };
      const permission = ruleset(body.permission ?? []);
      if (!permission) return badRequest('Expected an array of rules\n  at ["permission"]');
      // As opencode: the rules given are appended to the session's.
      session.permission = [...session.permission, ...permission];
      if (typeof body.title === "string") session.title = body.title;
      return json(sessionInfo(session));
    }
    // The echo engine writes no todos.
    if (action === "todo" && method === "GET") return json([]);
    if (!action && method === "DELETE") {
      echo.remove(session);
      return json(true);
    }
    if (action === "message" && method === "GET") {
      if (!messageId) return json(session.messages);
      const found = session.messages.find((m) => m.info.id === decodeURIComponent(messageId));
      return found ? json(found) : opencodeError(404, "NotFoundError", `Message not found: ${decodeURIComponent(messageId)}`);
    }
    if (action === "prompt_async" && method === "POST") {
      const body = (await request.json().catch(() => ({}))) as PromptBody;
      if (!Array.isArray(body.parts)) return badRequest('Missing key\n  at ["parts"]');
      if (body.messageID !== undefined && (typeof body.messageID !== "string" || !body.messageID.startsWith("msg"))) {
        return badRequest(`Expected a string starting with "msg", got ${JSON.stringify(body.messageID)}\n  at ["messageID"]`);
      }
      const text = body.parts
        .filter((p) => p.type === "text")
        .map((p) => p.text ?? "")
        .join("");
      if (body.tools)
        session.permission = Object.entries(body.tools).map(([permission, allowed]) => ({ permission, pattern: "*", action: allowed ? "allow" : "deny" }));
      received.push({ sessionID: session.id, messageID: typeof body.messageID === "string" ? body.messageID : null, model: body.model ?? null });
      echo.prompt(session, { text, ...(body.messageID ? { messageID: body.messageID } : {}), ...(body.model ? { model: body.model } : {}) });
      return new Response(null, { status: 204 });
    }
    if (action === "abort" && method === "POST") {
      echo.abort(session);
      return json(true);
    }
    return opencodeError(404, "NotFoundError", "Route not found");
  };

  /** `GET /permission`, `GET /question` and their reply routes, with opencode's 404 for a request it no longer has. */
  const answerRoute = async (request: Request, kind: "permission" | "question", rawId: string | undefined): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (!rawId) return method === "GET" ? json(requests.list(kind)) : opencodeError(404, "NotFoundError", "Route not found");
    if (method !== "POST") return opencodeError(404, "NotFoundError", "Route not found");
    const id = decodeURIComponent(rawId);
    const body = (await request.json().catch(() => ({}))) as { reply?: unknown; answers?: unknown };
    const answer = kind === "permission" ? { reply: body.reply } : { answers: body.answers };
    const valid = kind === "permission" ? ["once", "always", "reject"].includes(String(body.reply)) : Array.isArray(body.answers);
    if (!valid) return badRequest(`Missing key\n  at ["${kind === "permission" ? "reply" : "answers"}"]`);
    if (requests.reply(kind, id, answer as never)) return json(true);
    const tag = kind === "permission" ? "PermissionNotFoundError" : "QuestionNotFoundError";
    return json({ _tag: tag, requestID: id, message: `${kind === "permission" ? "Permission" : "Question"} request not found: ${id}` }, 404);
  };

  /**
   * `GET /mcp`, `POST /mcp` (`{name, config}`; answered 200 with every entry's status, even when
   * this one failed) and `POST /mcp/:name/disconnect`, as opencode answers them.
   */
  const mcpRoute = async (request: Request, path: string): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (method === "GET" && path === "/mcp") return json(mcp.statuses());
    if (method === "POST" && path === "/mcp") {
      const body = (await request.json().catch(() => ({}))) as { name?: unknown; config?: unknown };
      if (typeof body.name !== "string") return badRequest('Missing key\n  at ["name"]');
      if (typeof body.config !== "object" || body.config === null) return badRequest('Missing key\n  at ["config"]');
      return json(await mcp.add(body.name, body.config as Parameters<typeof mcp.add>[1]));
    }
    const disconnect = /^\/mcp\/([^/]+)\/disconnect$/.exec(path);
    if (method === "POST" && disconnect) {
      const name = decodeURIComponent(disconnect[1]!);
      if (mcp.disconnect(name)) return json(true);
      return json({ _tag: "McpServerNotFoundError", name, message: `MCP server not found: ${name}` }, 404);
    }
    return opencodeError(404, "NotFoundError", "Route not found");
  };

  /** Kills the engine mid-whatever: turns abandoned, requests forgotten, MCP entries dropped, event streams cut. */
  const crash = () => {
    mcp.clear();
    echo.crash();
    requests.clear();
    bus.endAll();
  };

  return {
    handle,
    crash,
    cutEventStreams: bus.endAll,
    eventStreams: bus.subscribers,
    close: () => {
      mcp.clear();
      echo.close();
    },
    receivedPrompts: () => [...received],
    mcpCalls: mcp.calls,
  };
}

/** A prompt the engine accepted (`prompt_async`): its session, the message id it was sent with, its model. */
export interface ReceivedPrompt {
  sessionID: string;
  messageID: string | null;
  model: { providerID: string; modelID: string } | null;
}

export type EchoEngine = ReturnType<typeof createEchoEngine>;
