/** One rule of a session's permission ruleset, as opencode takes it on `POST /session`. */
export interface PermissionRule {
  permission: string;
  pattern: string;
  action: "allow" | "deny" | "ask";
}

/** A remote MCP server as opencode's `POST /mcp` takes it (the echo engine runs no local ones). */
interface McpConfig {
  type: "remote" | "local";
  url?: string;
  headers?: Record<string, string>;
  enabled?: boolean;
  timeout?: number;
}

/** How an entry is held, as `GET /mcp` lists it. */
type McpStatus = { status: "connected" } | { status: "disabled" } | { status: "failed"; error: string };

interface Entry {
  status: McpStatus;
  connection: McpConnection | null;
}

/** A tool call that went through an entry: the tool, the entry and the credential it carried. */
export interface McpCall {
  tool: string;
  entry: string;
  authorization: string | null;
}

// What opencode's MCP client says of a call whose client was closed under it.
const CONNECTION_CLOSED = "MCP error -32000: Connection closed";
// opencode's connect timeout when the entry names none.
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * The echo engine's MCP entries, as opencode 1.18 keeps them per directory: keyed by name;
 * registering a name connects a new client (initialize, `tools/list`) and only then closes the
 * previous client of that name, whose open calls end `MCP error -32000: Connection closed`;
 * other names are never touched. A server that cannot be reached is held `failed`. Tools are
 * named `<entry>_<tool>` (anything outside [A-Za-z0-9_-] made `_`), and a session sees those its
 * ruleset does not deny (the last rule matching the tool's name decides).
 */
export function createEchoMcp() {
  const entries = new Map<string, Entry>();
  const calls: McpCall[] = [];

  const statuses = () => Object.fromEntries([...entries].map(([name, entry]) => [name, entry.status]));
  return {
    statuses,
    /** `POST /mcp`: connects and stores `name`, then closes what it replaced. */
    async add(name: string, config: McpConfig): Promise<Record<string, McpStatus>> {
      const entry = await connectEntry(config);
      const previous = entries.get(name);
      entries.set(name, entry);
      previous?.connection?.close();
      return statuses();
    },
    /** `POST /mcp/:name/disconnect`: false for a name it does not hold. */
    disconnect(name: string): boolean {
      const entry = entries.get(name);
      if (!entry) return false;
      entry.connection?.close();
      entries.set(name, { status: { status: "disabled" }, connection: null });
      return true;
    },
    /** The names of the tools a session with `rules` is offered. */
    visibleTools(rules: readonly PermissionRule[]): string[] {
      return [...entries]
        .flatMap(([name, entry]) => (entry.connection?.tools ?? []).map((tool) => toolName(name, tool)))
        .filter((tool) => !hidden(tool, rules));
    },
    /** Calls tool `name` (as offered) through its entry's client; the tool's text, or why not. */
    async call(name: string, args: unknown, signal: AbortSignal): Promise<{ output: string } | { error: string }> {
      for (const [entry, held] of entries) {
        const tool = held.connection?.tools.find((t) => toolName(entry, t) === name);
        if (!tool || !held.connection) continue;
        calls.push({ tool, entry, authorization: held.connection.authorization });
        return held.connection.call(tool, args, signal).then(
          (output) => ({ output }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        );
      }
      return { error: `Model tried to call unavailable tool '${name}'.` };
    },
    /** Every call that went through an entry, oldest first. */
    calls: () => [...calls],
    /** The instance is gone (a crash or a restart): every entry is dropped and closed. */
    clear(): void {
      for (const entry of entries.values()) entry.connection?.close();
      entries.clear();
    },
  };
}

export type EchoMcp = ReturnType<typeof createEchoMcp>;

async function connectEntry(config: McpConfig): Promise<Entry> {
  if (config.enabled === false) return { status: { status: "disabled" }, connection: null };
  if (config.type !== "remote" || !config.url) return { status: { status: "failed", error: "the echo engine runs no local MCP servers" }, connection: null };
  try {
    const connection = await connectRemote(config.url, config.headers ?? {}, config.timeout ?? CONNECT_TIMEOUT_MS);
    return { status: { status: "connected" }, connection };
  } catch (error) {
    return { status: { status: "failed", error: error instanceof Error ? error.message : String(error) }, connection: null };
  }
}

function toolName(entry: string, tool: string): string {
  const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, "_");
  return `${sanitize(entry)}_${sanitize(tool)}`;
}

/** opencode's rule: the last rule whose permission matches the tool's name; `deny` for every pattern hides it. */
function hidden(tool: string, rules: readonly PermissionRule[]): boolean {
  const rule = rules.findLast((r) => wildcard(r.permission).test(tool));
  return rule?.action === "deny" && rule.pattern === "*";
}

function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`, "s");
}

interface McpConnection {
  tools: string[];
  authorization: string | null;
  call(tool: string, args: unknown, signal: AbortSignal): Promise<string>;
  close(): void;
}

/**
 * A small client of a streamable-HTTP MCP server (JSON-RPC over POST, answered as JSON or as an
 * event stream): enough to list and call tools with the entry's headers. Closing it ends its
 * open calls as opencode's client does.
 */
async function connectRemote(url: string, headers: Record<string, string>, timeoutMs: number): Promise<McpConnection> {
  const closed = new AbortController();
  let sessionId: string | null = null;
  let nextId = 1;
  const send = async (method: string, params: unknown, signal: AbortSignal, notify = false): Promise<unknown> => {
    const id = notify ? undefined : nextId++;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId ? { "mcp-session-id": sessionId } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", method, params, ...(id === undefined ? {} : { id }) }),
      signal: AbortSignal.any([signal, closed.signal]),
    });
    if (!response.ok) throw new Error(`Streamable HTTP error: ${response.status} ${await response.text().catch(() => "")}`.trim());
    sessionId ??= response.headers.get("mcp-session-id");
    if (id === undefined) return undefined;
    const reply = rpcMessages(await response.text(), response.headers.get("content-type") ?? "").find((m) => m.id === id);
    if (!reply) throw new Error(`no answer to ${method}`);
    if (reply.error) throw new Error(`MCP error ${reply.error.code}: ${reply.error.message}`);
    return reply.result;
  };
  const connecting = AbortSignal.timeout(timeoutMs);
  await send("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "witness-echo", version: "witness" } }, connecting);
  await send("notifications/initialized", {}, connecting, true);
  const listed = (await send("tools/list", {}, connecting)) as { tools?: { name: string }[] };
  return {
    tools: (listed.tools ?? []).map((t) => t.name),
    authorization: headers.authorization ?? headers.Authorization ?? null,
    call: async (tool, args, signal) => {
      try {
        const result = (await send("tools/call", { name: tool, arguments: args }, signal)) as { content?: { type: string; text?: string }[] };
        return (result.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("\n");
      } catch (error) {
        if (closed.signal.aborted) throw new Error(CONNECTION_CLOSED);
        throw error;
      }
    },
    close: () => closed.abort(),
  };
}

interface RpcMessage {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The JSON-RPC messages of an answer: one JSON body, or the `data:` lines of an event stream. */
function rpcMessages(text: string, contentType: string): RpcMessage[] {
  if (!contentType.includes("text/event-stream")) return [JSON.parse(text) as RpcMessage];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)) as RpcMessage);
}
