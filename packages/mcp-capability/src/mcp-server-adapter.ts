import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { CARD_RESOURCE_URI, registerCardResource } from "@openwork/mcp-app-card";
import { z } from "zod";
import type { CapabilityContext } from "./capability-context.js";
import type { RemoteSessionSource } from "./create-remote-session-source.js";
import { errorResult } from "./to-tool-result.js";
import { sessionError } from "@openwork/remote-session-core";

export interface McpAdapterOptions {
  source: RemoteSessionSource;
  /**
   * The caller, from the verified AuthInfo the transport passed in. Default: `authInfo.scopes`
   * and `authInfo.extra.organizationId` / `memberId`.
   */
  contextOf?: (authInfo: AuthInfo | undefined) => CapabilityContext | null;
  /** Register the card resource and link it on `execute_capability`. Default true. */
  card?: boolean;
}

function defaultContext(authInfo: AuthInfo | undefined): CapabilityContext | null {
  const extra = authInfo?.extra as { organizationId?: unknown; memberId?: unknown } | undefined;
  if (!authInfo || typeof extra?.organizationId !== "string") return null;
  return {
    organizationId: extra.organizationId,
    memberId: typeof extra.memberId === "string" ? extra.memberId : null,
    scopes: authInfo.scopes,
  };
}

/**
 * Puts den-api's two tools on an `@modelcontextprotocol/sdk` McpServer: `search_capabilities`
 * (`query`, `limit`) and `execute_capability` (`name`, `body`), with the card linked on the latter.
 */
export function registerRemoteSessionTools(server: McpServer, options: McpAdapterOptions): void {
  const contextOf = options.contextOf ?? defaultContext;
  const withCard = options.card ?? true;
  if (withCard) registerCardResource(server);

  server.registerTool(
    "search_capabilities",
    {
      description: "Search the capabilities available to you, e.g. remote sessions on your cloud worker or desktops. Then run one with execute_capability.",
      inputSchema: { query: z.string().min(1).max(500), limit: z.int().min(1).max(20).default(5) },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ query, limit }, extra) => {
      const ctx = contextOf(extra.authInfo);
      const matches = ctx ? await options.source.search(ctx, query, limit) : [];
      const text = matches.length
        ? matches.map((m) => `${m.name} — ${m.summary}`).join("\n")
        : "No capability matches. Try other words, e.g. 'remote session'.";
      return { content: [{ type: "text", text }], structuredContent: { matches } };
    },
  );

  const execute = async ({ name, body }: { name: string; body?: unknown }, extra: { authInfo?: AuthInfo }) => {
    const ctx = contextOf(extra.authInfo);
    const parsed = options.source.parseName(name);
    if (!ctx) return errorResult(sessionError("membership_required", "this token does not name an organization member"));
    if (!parsed) return errorResult(sessionError("unknown_capability", `no capability named ${name}; call search_capabilities to find a valid name`));
    return options.source.execute(ctx, parsed, { body });
  };
  const config = {
    description: "Run a capability by its exact name from search_capabilities, with its arguments in body.",
    inputSchema: { name: z.string().min(1).max(200), body: z.unknown().optional() },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  };
  if (withCard) registerAppTool(server, "execute_capability", { ...config, _meta: { ui: { resourceUri: CARD_RESOURCE_URI } } }, execute);
  else server.registerTool("execute_capability", config, execute);
}
