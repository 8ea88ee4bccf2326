import type { MemberSlots } from "@openwork/mcp-capability/internal";
import { errorPayload, sessionError } from "@openwork/remote-session-core";
import { peekJsonBody } from "@openwork/remote-session-core/internal";
import type { PushAuth } from "./push-bus.js";
import type { PushHub } from "./push-hub.js";
import { type ClientCapabilities, ownerOf, type PushStore } from "./push-store.js";

/** Answers one MCP request (stateless: one server and transport per request) for a verified caller. */
export type PushEndpoint = (request: Request, auth: PushAuth) => Promise<Response>;

/** What one member may hold on one process, and keep across replicas. */
export interface PushLimits {
  /** Push GET streams one member holds open on this process. Default 16; one more is a 429. */
  pushStreams: number;
  /** Stateful MCP sessions one member keeps (in PostgreSQL). Default 64; an `initialize` past it ends their oldest. */
  mcpSessions: number;
}

export const DEFAULT_PUSH_LIMITS: PushLimits = { pushStreams: 16, mcpSessions: 64 };

export interface PushSessionsOptions {
  store: PushStore;
  hub: PushHub;
  limits: PushLimits;
  /** Each member's push streams on this process (GET streams and 2026-era listens alike). */
  streams: MemberSlots;
  /** Whether the caller may open one more MCP session now: null when it may, else how long until it may (ms). */
  admitOpen?: (auth: PushAuth) => number | null;
}

/** Whose limits a request counts against: the organization and user of the verified token, else its client. */
export const memberKey = (auth: PushAuth) => {
  const owner = ownerOf(auth);
  return owner ? `${owner.organizationId}\u0000${owner.userId}` : `client\u0000${auth.clientId}`;
};

/** The typed 429 of a refused member. */
export const rateLimited = (message: string, retryAfterMs: number) =>
  Response.json(errorPayload(sessionError("rate_limited", message, { retryAfterMs })), {
    status: 429,
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1_000))) },
  });

/** The 429 of a member holding all the push streams it may on this process. */
export const tooManyStreams = (limits: PushLimits) =>
  rateLimited(`at most ${limits.pushStreams} push streams per member are open at once; close one, or retry after retryAfterMs`, 5_000);

/**
 * The MCP endpoint with stateful sessions kept in PostgreSQL, so any replica answers any request:
 * an `initialize` is answered with a new `Mcp-Session-Id`; a request carrying one is checked
 * against the store (unknown, or another caller's: 404, and the client initializes again) and
 * answered statelessly with the session on its auth; `GET` opens the session's push stream
 * (resumed after `Last-Event-ID`); `DELETE` ends the session. Requests without a session id are
 * answered exactly as before. Per member: new sessions pass `admitOpen`, the oldest beyond
 * `mcpSessions` ends, and at most `pushStreams` streams are open on this process (one more is a
 * 429, refused before the store is asked).
 */
export function withPushSessions(endpoint: PushEndpoint, options: PushSessionsOptions): PushEndpoint {
  const { store, hub, limits, streams } = options;
  return async (request, auth) => {
    const owner = ownerOf(auth);
    const mcpSessionId = request.headers.get("mcp-session-id");
    if (!mcpSessionId || !owner) {
      if (request.method === "GET")
        return Response.json({ error: "method_not_allowed", message: "GET needs the Mcp-Session-Id this server assigned at initialize" }, { status: 405 });
      const initialize = owner && request.method === "POST" ? initializeOf(await peekJsonBody(request)) : null;
      if (initialize) {
        const wait = options.admitOpen?.(auth) ?? null;
        if (wait !== null) return rateLimited("this member opens MCP sessions too fast; retry after retryAfterMs", wait);
      }
      const response = await endpoint(request, auth);
      if (!initialize || !owner || !response.ok) return response;
      const headers = new Headers(response.headers);
      headers.set("mcp-session-id", await store.open(owner, limits.mcpSessions, initialize));
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
    if (request.method === "GET") {
      const release = streams.enter(memberKey(auth));
      if (!release) return tooManyStreams(limits);
      request.signal.addEventListener("abort", release, { once: true });
      if (!(await store.touch(mcpSessionId, owner))) {
        release();
        return sessionNotFound();
      }
      return hub.stream(mcpSessionId, auth, request.headers.get("last-event-id"), release);
    }
    const seen = await store.touch(mcpSessionId, owner);
    if (!seen) return sessionNotFound();
    if (request.method === "DELETE") {
      await store.close(mcpSessionId, owner);
      return new Response(null, { status: 200 });
    }
    return endpoint(request, { ...auth, extra: { ...auth.extra, mcpSessionId, mcpClientCapabilities: seen.clientCapabilities } });
  };
}

const sessionNotFound = () => Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });

// An `elicitation` capability larger than this is not remembered (its modes are a few small keys).
const CAPABILITY_BYTES = 1_024;

/**
 * Of an `initialize`, what its client declares that the gateway acts on (kept with the session);
 * null for any other body.
 */
function initializeOf(body: unknown): ClientCapabilities | null {
  if (typeof body !== "object" || body === null || Array.isArray(body) || (body as { method?: unknown }).method !== "initialize") return null;
  const declared = (body as { params?: { capabilities?: { elicitation?: unknown } } }).params?.capabilities?.elicitation;
  const kept = typeof declared === "object" && declared !== null && !Array.isArray(declared) && JSON.stringify(declared).length <= CAPABILITY_BYTES;
  return kept ? { elicitation: declared as Record<string, unknown> } : {};
}
