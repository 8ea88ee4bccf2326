import type { McpServer } from "@modelcontextprotocol/server";
import { createRemoteSessionEndpoint, type ElicitAnswersOptions, type McpEra, type RemoteSessionEndpoint } from "@openwork/mcp-capability/server-v2";
import type { RemoteSessionHost } from "./host-options.js";

export interface HostMcpEndpointOptions {
  /** The server's name and version, as `initialize` and `server/discover` answer them. */
  serverInfo?: { name: string; version: string };
  /** Adds the host's own tools and resources to each request's server (`era`: which revision it answers). */
  configure?: (server: McpServer, era: McpEra) => void;
  /** Requests the SDK refused and errors out of band (reporting only). */
  onerror?: (error: Error) => void;
  /** Ask a 2026-era client's human directly when its waiting read meets a question. Off unless given (its HMAC secret). */
  elicitation?: ElicitAnswersOptions;
}

/**
 * The host's MCP endpoint for both eras, to mount with `host.mcpRoutes({ path, endpoint })`:
 * den-api's two tools over the host's source, and with push on, `remote-session://` resources
 * whose 2025-era clients subscribe in stateful sessions (`Mcp-Session-Id`, GET stream) and whose
 * 2026-era clients `subscriptions/listen`.
 */
export function createHostMcpEndpoint(host: Pick<RemoteSessionHost, "source" | "push">, options: HostMcpEndpointOptions = {}): RemoteSessionEndpoint {
  const { push } = host;
  return createRemoteSessionEndpoint({
    source: host.source,
    ...(options.serverInfo ? { serverInfo: options.serverInfo } : {}),
    ...(options.onerror ? { onerror: options.onerror } : {}),
    ...(options.elicitation ? { elicitation: options.elicitation } : {}),
    configure: (server, era) => {
      push?.registerResources(server, era);
      options.configure?.(server, era);
    },
    ...(push ? { legacy: push.endpoint, modern: push.listen } : {}),
  });
}
