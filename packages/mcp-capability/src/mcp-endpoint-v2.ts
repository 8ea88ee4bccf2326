import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  type ServerEventBus,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { peekJsonBody } from "@openwork/remote-session-core/internal";
import { type AskedCodec, askedCodec, type ElicitAnswersOptions, elicitsForms } from "./elicit-answers.js";
import { type AskWaiters, createAskWaiters, declaredAtInitialize, isAskReplies, type LegacyAsking, takeAskReplies } from "./elicit-legacy.js";
import { createToolHandlers } from "./mcp-tools.js";
import { type RemoteSessionToolsOptions, registerRemoteSessionTools } from "./server-v2-tools.js";

/** Answers one MCP request of a verified caller. */
export type McpEndpoint = (request: Request, auth: AuthInfo) => Promise<Response>;

/** Which revision a request's server answers: `legacy` for the 2025 era (initialize, sessions), `modern` for 2026-07-28. */
export type McpEra = "legacy" | "modern";

export interface RemoteSessionEndpointOptions extends RemoteSessionToolsOptions {
  /** The server's name and version, as `initialize` and `server/discover` answer them. */
  serverInfo?: { name: string; version: string };
  /** Adds to each request's server, before it answers: the host's own tools and resources. */
  configure?: (server: McpServer, era: McpEra) => void;
  /**
   * Wraps the 2025-era leg, e.g. push's stateful sessions (`SessionPush.endpoint`). Default: that
   * leg answers statelessly, one server per request, in JSON.
   */
  legacy?: (stateless: McpEndpoint) => McpEndpoint;
  /**
   * Answers a 2026-era request before the SDK does, or passes (null): push's `subscriptions/listen`
   * for `remote-session://` resources. The request's body is `message` (parsed once here).
   */
  modern?: (message: unknown, request: Request, auth: AuthInfo, serverInfo: { name: string; version: string }) => Promise<Response | null>;
  /** The change-event bus of the SDK's own `subscriptions/listen` (a host's list changes). Default in-process. */
  bus?: ServerEventBus;
  /** Requests refused by the SDK and errors out of band (reporting only). */
  onerror?: (error: Error) => void;
  /**
   * Ask the client's human directly when its waiting read meets a session's question: a 2026-era
   * client by `input_required` with a sealed `requestState`; a 2025-era one whose `initialize`
   * declared elicitation (remembered by `legacy`, e.g. push's sessions, as `mcpClientCapabilities`
   * on the auth) by `elicitation/create` on the call's stream. Off unless given.
   */
  elicitation?: ElicitAnswersOptions;
}

/** One MCP endpoint serving both eras; `close()` ends the 2026-era exchanges in flight. */
export interface RemoteSessionEndpoint {
  endpoint: McpEndpoint;
  close(): Promise<void>;
}

export const DEFAULT_SERVER_INFO = { name: "openwork-remote-sessions", version: "0.0.0" } as const;

/**
 * den-api's two tools (and the card, the skill, whatever `configure` adds) on one endpoint for
 * every client in use: a 2026-07-28 request (its `_meta` envelope: `server/discover`, then
 * self-contained requests) is answered by the SDK's per-request handler; a 2025-era request
 * (`initialize`, `Mcp-Session-Id`, GET streams) by a stateless server of its own, or by what
 * `legacy` wraps it in. The same factory builds the server of both, so the eras cannot drift.
 */
export function createRemoteSessionEndpoint(options: RemoteSessionEndpointOptions): RemoteSessionEndpoint {
  const serverInfo = options.serverInfo ?? DEFAULT_SERVER_INFO;
  const asking = options.elicitation ? { codec: askedCodec(options.elicitation), waiters: createAskWaiters() } : undefined;
  const build = (era: McpEra, legacyAsking?: LegacyAsking) => {
    const capabilities = { tools: {}, resources: {} };
    // What a 2026-era retry echoes is checked (sealed, unexpired, the caller's) before any handler runs.
    const server =
      era === "modern" && asking
        ? new McpServer(serverInfo, { capabilities, requestState: { verify: asking.codec.verify } })
        : new McpServer(serverInfo, { capabilities });
    registerRemoteSessionTools(server, {
      ...options,
      ...(era === "modern" && asking ? { asking: asking.codec } : {}),
      ...(legacyAsking ? { legacyAsking } : {}),
    });
    options.configure?.(server, era);
    return server;
  };
  const modern = createMcpHandler(({ era }) => build(era), {
    legacy: "reject",
    ...(options.bus ? { bus: options.bus } : {}),
    ...(options.onerror ? { onerror: options.onerror } : {}),
  });
  const stateless: McpEndpoint = (request, auth) => answerStateless(request, auth, asking && clientElicits(auth) ? asking : undefined, build);
  const legacy = options.legacy ? options.legacy(stateless) : stateless;
  const handlers = createToolHandlers(options);
  const endpoint: McpEndpoint = async (request, auth) => {
    const message = await peekJsonBody(request);
    // A 2025-era client's replies to what was asked: any replica takes them (they carry what was asked, sealed).
    if (asking && isAskReplies(message)) return takeAskReplies(asking, message, auth, (call) => handlers.execute(call, auth));
    if (await isLegacyRequest(request, message)) return legacy(request, auth);
    if (closed) return shuttingDown();
    const answered = message === undefined ? null : await options.modern?.(message, request, auth, serverInfo);
    return answered ?? modern.fetch(request, { authInfo: auth, ...(message === undefined ? {} : { parsedBody: message }) });
  };
  let closed = false;
  return {
    endpoint,
    close: async () => {
      closed = true;
      await modern.close();
    },
  };
}

/**
 * A 2025-era request, answered by a server of its own: in JSON, or as a stream when its client's
 * human may be asked mid-call (`asking`: the call's `elicitation/create` goes on that stream).
 */
async function answerStateless(
  request: Request,
  auth: AuthInfo,
  asking: { codec: AskedCodec; waiters: AskWaiters } | undefined,
  build: (era: McpEra, legacyAsking?: LegacyAsking) => McpServer,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: asking === undefined });
  const send: LegacyAsking["send"] = (message, relatedRequestId) => transport.send(message, { relatedRequestId });
  await build("legacy", asking ? { ...asking, send } : undefined).connect(transport);
  return transport.handleRequest(request, { authInfo: auth });
}

/** Whether the client of a 2025-era stateful session declared form elicitation at `initialize` (as `legacy` remembered it). */
function clientElicits(auth: AuthInfo): boolean {
  return elicitsForms(declaredAtInitialize(auth));
}

/** A 2026-era request after `close()`: the process is going away; another replica (or this one restarted) answers. */
const shuttingDown = () =>
  Response.json(
    { error: "shutting_down", message: "this gateway process is shutting down; retry", retryable: true, retryAfterMs: 1_000 },
    { status: 503, headers: { "retry-after": "1" } },
  );
