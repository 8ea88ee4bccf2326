import { createMemberSlots } from "@openwork/mcp-capability";
import type { McpEndpoint } from "../mcp-endpoint.js";
import { type MemberGate, mcpMemberKey as memberKey, rateLimited, whenBodyEnds } from "../member-gate.js";
import type { MemberLimits } from "../member-limits.js";
import type { PushHub } from "./push-hub.js";
import { ownerOf, type PushStore } from "./push-store.js";

export interface PushSessionsOptions {
  store: PushStore;
  hub: PushHub;
  gate: MemberGate;
  limits: Pick<MemberLimits, "pushStreams" | "mcpSessions" | "mcpSessionOpens">;
}

/**
 * The MCP endpoint with stateful sessions kept in PostgreSQL, so any replica answers any request:
 * an `initialize` is answered with a new `Mcp-Session-Id`; a request carrying one is checked
 * against the store (unknown, or another caller's: 404, and the client initializes again) and
 * answered statelessly with the session on its auth; `GET` opens the session's push stream
 * (resumed after `Last-Event-ID`); `DELETE` ends the session. Requests without a session id are
 * answered exactly as before. Per member: new sessions are rate-limited, the oldest beyond
 * `mcpSessions` ends, and at most `pushStreams` streams are open on this process (one more is a
 * 429, refused before the store is asked).
 */
export function withPushSessions(endpoint: McpEndpoint, options: PushSessionsOptions): McpEndpoint {
  const { store, hub, gate, limits } = options;
  const streams = createMemberSlots(limits.pushStreams);
  return async (request, auth) => {
    const owner = ownerOf(auth);
    const mcpSessionId = request.headers.get("mcp-session-id");
    if (!mcpSessionId || !owner) {
      if (request.method === "GET") return Response.json({ error: "method_not_allowed", message: "GET needs the Mcp-Session-Id this gateway assigned at initialize" }, { status: 405 });
      const initialize = owner && request.method === "POST" && isInitialize(await request.clone().json().catch(() => null));
      if (initialize) {
        const wait = gate.take(`mcp-open\u0000${memberKey(auth)}`, limits.mcpSessionOpens);
        if (wait !== null) return rateLimited("this member opens MCP sessions too fast; retry after retryAfterMs", wait);
      }
      const response = await endpoint(request, auth);
      if (!initialize || !response.ok) return response;
      const headers = new Headers(response.headers);
      headers.set("mcp-session-id", await store.open(owner, limits.mcpSessions));
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
    if (request.method === "GET") {
      const release = streams.enter(memberKey(auth));
      if (!release) return rateLimited(`at most ${limits.pushStreams} push streams per member are open at once; close one, or retry after retryAfterMs`, 5_000);
      request.signal.addEventListener("abort", release, { once: true });
      if (!(await store.touch(mcpSessionId, owner))) {
        release();
        return sessionNotFound();
      }
      return whenBodyEnds(hub.stream(mcpSessionId, auth, request.headers.get("last-event-id")), release);
    }
    if (!(await store.touch(mcpSessionId, owner))) return sessionNotFound();
    if (request.method === "DELETE") {
      await store.close(mcpSessionId, owner);
      return new Response(null, { status: 200 });
    }
    return endpoint(request, { ...auth, extra: { ...auth.extra, mcpSessionId } });
  };
}

const sessionNotFound = () => Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });

function isInitialize(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === "initialize";
}
