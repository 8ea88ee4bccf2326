// The floods of `pnpm attacks`: each starts against a gateway, holds while the bystander is
// measured, and ends. One client, one credential (or none) per flood.
import { setMaxListeners } from "node:events";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";

export interface Flood {
  /** What was sent and what came back, for the table. */
  facts(): Record<string, unknown>;
  stop(): Promise<void>;
  /** Resolves when a flood of requests has sent them all (connection floods hold until stopped). */
  done?: Promise<void>;
}

/** `count` raw connections to `port`, each sent `opening` (nothing: idle sockets). */
export function socketFlood(port: number, count: number, opening: string): Flood {
  const sockets: Socket[] = [];
  let closedByServer = 0;
  for (let i = 0; i < count; i++) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.on("close", () => closedByServer++);
    if (opening) socket.write(opening);
    sockets.push(socket);
  }
  return {
    facts: () => ({ connections: count, endedByGateway: closedByServer }),
    stop: async () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request on a connection of its own (no pool: a flood's requests each hold a socket, as a
 * client opening connections would), aborted by `signal`. Streams resolve at their headers.
 */
export function rawRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal; agent?: Agent; stream?: boolean },
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: init.method ?? "GET", headers: init.headers, agent: init.agent ?? false, ...(init.signal ? { signal: init.signal } : {}) },
      (res) => {
        if (init.stream && res.statusCode === 200) {
          res.on("error", () => {});
          res.resume();
          return resolve({ status: 200, headers: res.headers, body: "" });
        }
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", () => resolve({ status: 0, headers: {}, body: "" }));
    req.end(init.body);
  });
}

/** Runs `attempt` `total` times, `concurrency` at a time, until done or stopped; counts answers by status. */
export function requestFlood(total: number, concurrency: number, attempt: (signal: AbortSignal) => Promise<number>): Flood & { done: Promise<void> } {
  const controller = new AbortController();
  // Every request of the flood listens on it.
  setMaxListeners(0, controller.signal);
  const statuses = new Map<number, number>();
  let started = 0;
  const worker = async () => {
    while (started < total && !controller.signal.aborted) {
      started++;
      const status = await attempt(controller.signal).catch(() => 0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  const done = Promise.all(Array.from({ length: concurrency }, worker)).then(() => undefined);
  return {
    done,
    facts: () => ({ requests: started, ...Object.fromEntries([...statuses].map(([status, n]) => [`status${status}`, n])) }),
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

/** One flood of `pnpm attacks`, as the parent names it to the flooding process. */
export interface FloodSpec {
  kind: "idle-sockets" | "slow-headers" | "slow-bodies" | "waiting-reads" | "push-streams" | "runner-streams" | "duplicate-creates" | "big-bodies";
  baseUrl: string;
  /** The flooding member's MCP token. */
  mcpToken: string;
  runnerToken?: string;
  /** The flooding member's session that waiting reads wait on. */
  sessionId?: string;
  count: number;
  concurrency?: number;
  /** runner-streams: each request on a new connection instead of a kept-alive one. */
  fresh?: boolean;
  /** big-bodies: the size of each chunked body, in MB, and where they are posted. */
  bodyMb?: number;
  path?: string;
}

const PROTOCOL = "2025-11-25";

/** Starts `spec`'s flood from this process. */
export function startFlood(spec: FloodSpec): Flood {
  const port = Number(new URL(spec.baseUrl).port);
  const mcpUrl = `${spec.baseUrl}/mcp/agent`;
  const headers = { authorization: `Bearer ${spec.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  const rpc = (method: string, params: unknown, signal: AbortSignal, extra: Record<string, string> = {}) =>
    rawRequest(mcpUrl, {
      method: "POST",
      headers: { ...headers, "mcp-protocol-version": PROTOCOL, ...extra },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal,
    });
  const execute = (name: string, body: unknown, signal: AbortSignal) => rpc("tools/call", { name: "execute_capability", arguments: { name, body } }, signal);
  // A refused capability call is a tool result (HTTP 200): counted as the 429 it stands for.
  const statusOf = (answer: RawAnswer) => (answer.body.includes('"error":"rate_limited"') ? 429 : answer.status);
  const all = spec.concurrency ?? spec.count;
  switch (spec.kind) {
    case "idle-sockets":
      return socketFlood(port, spec.count, "");
    case "slow-headers":
      return socketFlood(port, spec.count, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    case "slow-bodies":
      return socketFlood(
        port,
        spec.count,
        `POST /mcp/agent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${spec.mcpToken}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"jsonrpc":`,
      );
    case "waiting-reads":
      return requestFlood(spec.count, all, async (signal) =>
        statusOf(await execute("remote-session:read", { sessionId: spec.sessionId, waitMs: 25_000 }, signal)),
      );
    case "push-streams":
      return requestFlood(spec.count, all, async (signal) => {
        const init = await rpc("initialize", { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "flood", version: "1" } }, signal);
        const id = init.headers["mcp-session-id"];
        if (init.status !== 200 || typeof id !== "string") return init.status;
        return (await rawRequest(mcpUrl, { headers: { ...headers, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL }, signal, stream: true })).status;
      });
    case "runner-streams": {
      const agent = new Agent({ keepAlive: true, maxSockets: all });
      const flood = requestFlood(
        spec.count,
        all,
        async (signal) =>
          (
            await rawRequest(`${spec.baseUrl}/v1/desktop-runner/events`, {
              headers: { authorization: `Bearer ${spec.runnerToken}` },
              signal,
              ...(spec.fresh ? {} : { agent }),
              stream: true,
            })
          ).status,
      );
      return {
        facts: flood.facts,
        done: flood.done,
        stop: async () => {
          await flood.stop();
          agent.destroy();
        },
      };
    }
    case "big-bodies":
      return bigBodies(`${spec.baseUrl}${spec.path ?? "/"}`, spec.count, spec.bodyMb ?? 256);
    case "duplicate-creates": {
      const deliverBy = new Date(Date.now() + 600_000).toISOString();
      return requestFlood(spec.count, all, async (signal) =>
        statusOf(await execute("remote-session:create", { target: "desktop", deliverBy, prompt: "storm", idempotencyKey: "storm" }, signal)),
      );
    }
  }
}

/**
 * `count` POSTs at once, each a chunked body of `mb` MB (no length, no credential), written as
 * fast as the gateway reads them; done when every one was answered or its connection closed.
 */
export function bigBodies(url: string, count: number, mb: number): Flood & { done: Promise<void> } {
  const statuses = new Map<number, number>();
  let written = 0;
  const chunk = Buffer.alloc(64 * 1024, "a");
  const requests: ReturnType<typeof request>[] = [];
  const one = () =>
    new Promise<void>((resolve) => {
      let status = 0;
      const req = request(
        url,
        { method: "POST", agent: false, headers: { "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked" } },
        (res) => {
          status = res.statusCode ?? 0;
          res.resume();
        },
      );
      requests.push(req);
      req.on("error", () => {});
      req.on("close", () => {
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        resolve();
      });
      let sent = 0;
      const pump = () => {
        while (sent < mb * 1024 * 1024 && !req.destroyed) {
          sent += chunk.length;
          written += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        req.end();
      };
      pump();
    });
  const done = Promise.all(Array.from({ length: count }, one)).then(() => undefined);
  return {
    done,
    facts: () => ({
      bodies: count,
      bodyMb: mb,
      mbWritten: Math.round(written / 1024 / 1024),
      ...Object.fromEntries([...statuses].map(([s, n]) => [`status${s}`, n])),
    }),
    stop: async () => {
      for (const req of requests) req.destroy();
      await done;
    },
  };
}
