import { type McpServer, ProtocolError, ResourceNotFoundError, ResourceTemplate } from "@modelcontextprotocol/server";
import type { PushAuth } from "./push-bus.js";
import { sessionIdOfUri } from "./push-hub.js";
import { SESSION_VERSION_META } from "./push-listen.js";
import { keyOf, type PushStore } from "./push-store.js";
import { fingerprintOf, type ReadAs } from "./watch-session.js";

/** The MCP session a request belongs to, as push's endpoint put it on the verified auth. */
export const mcpSessionOf = (auth: PushAuth | undefined): string | null => {
  const id = auth?.extra?.mcpSessionId;
  return typeof id === "string" ? id : null;
};

/**
 * Each session as a resource `remote-session://<sessionId>` (reading it answers what `read`
 * answers). For a 2025-era server also `resources/subscribe` / `unsubscribe` on it, declared in
 * the server's capabilities: the requests of a stateful MCP session (its `Mcp-Session-Id`) may
 * subscribe. A 2026-era server has no such methods: its clients listen (`subscriptions/listen`).
 */
export function registerSessionResources(server: McpServer, options: { store: PushStore; read: ReadAs }, era: "legacy" | "modern" = "legacy"): void {
  const readOrThrow = async (uri: string, auth: PushAuth | undefined) => {
    const sessionId = sessionIdOfUri(uri);
    const slice = sessionId && auth ? await options.read(auth, { sessionId }) : null;
    // Another member's session reads exactly like one that does not exist.
    if (!sessionId || !slice) throw new ResourceNotFoundError(uri);
    return { sessionId, slice };
  };
  server.registerResource(
    "remote-session",
    new ResourceTemplate("remote-session://{sessionId}", { list: undefined }),
    { mimeType: "application/json", description: "A remote session: what remote-session:read answers for it. Subscribe to be told when it changes." },
    async (uri, _variables, ctx) => {
      const { slice } = await readOrThrow(uri.href, ctx.http?.authInfo as PushAuth | undefined);
      // Its version: what a 2026-era listener names to be told of what it missed.
      const _meta = { [SESSION_VERSION_META]: fingerprintOf(slice) };
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(slice), _meta }] };
    },
  );
  // Both eras: subscribe (2025) and listen (2026, answered by `SessionPush.listen`) are push.
  server.server.registerCapabilities({ resources: { subscribe: true } });
  if (era === "modern") return;
  const sessionOf = (auth: PushAuth | undefined) => {
    const id = mcpSessionOf(auth);
    if (!id || !auth) throw new ProtocolError(-32600, "resources/subscribe needs the Mcp-Session-Id this server assigned at initialize");
    return keyOf(id, auth);
  };
  server.server.setRequestHandler("resources/subscribe", async (request, ctx) => {
    const auth = ctx.http?.authInfo as PushAuth | undefined;
    const mcpSessionId = sessionOf(auth);
    const { sessionId, slice } = await readOrThrow(request.params.uri, auth);
    // What the caller sees now is announced already: the next change is what it hears of.
    await options.store.subscribe(mcpSessionId, { uri: request.params.uri, remoteSessionId: sessionId, fingerprint: fingerprintOf(slice) });
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", async (request, ctx) => {
    await options.store.unsubscribe(sessionOf(ctx.http?.authInfo as PushAuth | undefined), request.params.uri);
    return {};
  });
}
