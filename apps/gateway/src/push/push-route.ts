import type { McpEndpoint } from "../mcp-endpoint.js";
import type { PushHub } from "./push-hub.js";
import { ownerOf, type PushStore } from "./push-store.js";

/**
 * The MCP endpoint with stateful sessions kept in PostgreSQL, so any replica answers any request:
 * an `initialize` is answered with a new `Mcp-Session-Id`; a request carrying one is checked
 * against the store (unknown, or another caller's: 404, and the client initializes again) and
 * answered statelessly with the session on its auth; `GET` opens the session's push stream
 * (resumed after `Last-Event-ID`); `DELETE` ends the session. Requests without a session id are
 * answered exactly as before.
 */
export function withPushSessions(endpoint: McpEndpoint, options: { store: PushStore; hub: PushHub }): McpEndpoint {
  return async (request, auth) => {
    const owner = ownerOf(auth);
    const mcpSessionId = request.headers.get("mcp-session-id");
    if (!mcpSessionId || !owner) {
      if (request.method === "GET") return Response.json({ error: "method_not_allowed", message: "GET needs the Mcp-Session-Id this gateway assigned at initialize" }, { status: 405 });
      const initialize = owner && request.method === "POST" && isInitialize(await request.clone().json().catch(() => null));
      const response = await endpoint(request, auth);
      if (!initialize || !response.ok) return response;
      const headers = new Headers(response.headers);
      headers.set("mcp-session-id", await options.store.open(owner));
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
    if (!(await options.store.touch(mcpSessionId, owner))) {
      return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });
    }
    if (request.method === "GET") return options.hub.stream(mcpSessionId, auth, request.headers.get("last-event-id"));
    if (request.method === "DELETE") {
      await options.store.close(mcpSessionId, owner);
      return new Response(null, { status: 200 });
    }
    return endpoint(request, { ...auth, extra: { ...auth.extra, mcpSessionId } });
  };
}


function isInitialize(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === "initialize";
}
