import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { createEchoEngine, type EchoEngine } from "./echo/echo-engine.js";
import { nativeSessionRoutes } from "./native-sessions.js";
import type { EchoTiming } from "./echo/echo-sessions.js";

export interface WitnessWorkerOptions {
  /** The public base URL of the worker (what the resolver reports as the worker URL). */
  baseUrl: string;
  clientToken: string;
  hostToken: string;
  /** The key den-api's resolver checks (`X-OpenWork-Gateway-Key`). */
  gatewayKey: string;
  /** Mount a real opencode server (its base URL and workspace directory); else the echo engine. */
  opencode?: { url: string; directory: string };
  /** The echo engine's timing (replies, slow words, retries). */
  echo?: Partial<EchoTiming>;
  workspaceId?: string;
  workerId?: string;
  /**
   * den-api's member authentication on the resolver: the member a request's bearer credential
   * names (null: 401 `unauthorized`), its organization checked against `x-openwork-org-id`, and
   * whether its organization has cloud (no: 404 `cloud_not_found`, as den-api answers). Without
   * it, any caller that knows the gateway key is a member with cloud.
   */
  members?: (bearerToken: string) => { organizationId: string; memberId: string; cloud?: boolean } | null;
  /** Where an unexpected error's line goes (its class and referenceId, never its message). Default stderr. */
  logger?: { error(message: string, fields?: Record<string, unknown>): void };
}

/** The worker's power, owned by whoever serves it: asleep means its port refuses connections. */
export interface WorkerPower {
  awake(): boolean;
  /** Starts waking it (idempotent while waking). */
  wake(): void;
}

/**
 * A stand-in openwork-server and, beside it, den-api's worker resolver: two Hono apps, served on
 * two ports as the real ones live on two hosts. Where it follows the real openwork-server 0.18.16:
 * only the client token is checked (never the host token), `/workspace/:id/opencode/*` and its
 * `/w/:id/opencode/*` alias, openwork's `{code, message}` errors, an engine that is down answers
 * 500 `internal_error`. Where it differs: one workspace, no config/skills/approvals routes, tokens
 * compared as given (no scopes).
 */
export function createWitnessWorker(options: WitnessWorkerOptions & { power: WorkerPower }) {
  const workspaceId = options.workspaceId ?? "ws_witness";
  const workerId = options.workerId ?? "wrk_witness";
  const echo: EchoEngine | null = options.opencode ? null : createEchoEngine(options.echo);
  const state = { engineDown: false };
  // Proxied event streams, so a test can cut them as a network blip does.
  const streams = new Set<AbortController>();
  // Digests, so a header byte such as 0xE9 (two UTF-8 bytes) is a refusal, not a length error.
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  const equal = (given: string | undefined, expected: string) => given !== undefined && timingSafeEqual(digest(given), digest(expected));

  // An unexpected error (an opencode that went away mid-proxy…) is openwork's JSON 500, with a
  // referenceId that is also in the log line: never Hono's plain-text 500.
  const logger = options.logger ?? {
    error: (message: string, fields?: Record<string, unknown>) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`),
  };
  const unexpected = (error: Error, c: { req: { method: string; path: string } }) => {
    const referenceId = `ref_${randomBytes(6).toString("hex")}`;
    logger.error("witness worker: request failed", { method: c.req.method, path: c.req.path, referenceId, error: error.constructor.name });
    return Response.json({ code: "internal_error", message: "Internal server error", referenceId }, { status: 500 });
  };

  const resolver = new Hono();
  resolver.onError(unexpected);
  resolver.get("/v1/cloud/gateway/resolve", (c) => {
    // As den-api: the key first (a wrong one gets the same 404 as "no cloud"), then the member.
    if (!equal(c.req.header("x-openwork-gateway-key"), options.gatewayKey)) return c.json({ error: "cloud_not_found" }, 404);
    if (options.members) {
      const token = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
      const member = token ? options.members(token) : null;
      if (!member) return c.json({ error: "unauthorized" }, 401);
      const organizationId = c.req.header("x-openwork-org-id") ?? member.organizationId;
      if (organizationId !== member.organizationId) return c.json({ error: "forbidden", message: "not a member of that organization" }, 403);
      if (member.cloud === false) return c.json({ error: "cloud_not_found" }, 404);
    }
    if (!options.power.awake()) {
      options.power.wake();
      return c.json({ status: "waking", url: null, clientToken: null, hostToken: null, expiresAt: null });
    }
    return c.json({ status: "ready", url: options.baseUrl, clientToken: options.clientToken, hostToken: options.hostToken, expiresAt: null });
  });

  const worker = new Hono();
  worker.onError(unexpected);
  worker.get("/health", (c) => c.json({ ok: true, version: "witness" }));
  // Everything else needs the client token; the real openwork-server does not check the host
  // token on these routes, so neither does the witness.
  worker.use("*", async (c, next) => {
    if (c.req.path === "/health") return next();
    const match = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
    if (!equal(match?.[1], options.clientToken)) return c.json({ code: "unauthorized", message: "Invalid bearer token" }, 401);
    return next();
  });
  worker.get("/workspaces", (c) => {
    const item = { id: workspaceId, name: "Witness workspace", workspaceType: "local" };
    return c.json({ items: [item], workspaces: [item], activeId: workspaceId });
  });
  /** The workspace's engine answers, or why it cannot (unknown workspace, engine down). */
  const refusal = (id: string | undefined): Response | null => {
    if (id !== workspaceId) return Response.json({ code: "workspace_not_found", message: "Workspace not found" }, { status: 404 });
    if (state.engineDown) return Response.json({ code: "internal_error", message: "Internal server error" }, { status: 500 });
    return null;
  };
  const toEngine = (request: Request, path: string, search: string) =>
    echo ? echo.handle(request, path) : proxy(request, `${options.opencode!.url}${path}${search}`, options.opencode!.directory, streams);
  const mount = async (c: { req: { param(name: string): string | undefined; raw: Request; url: string } }, prefix: string) => {
    const refused = refusal(c.req.param("id"));
    if (refused) return refused;
    const url = new URL(c.req.url);
    return toEngine(c.req.raw, url.pathname.slice(`/${prefix}/${workspaceId}/opencode`.length) || "/", url.search);
  };
  const native = nativeSessionRoutes((method, target, body) => {
    const url = new URL(target, "http://engine");
    const request = new Request(url, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return toEngine(request, url.pathname, url.search);
  });
  worker.use("/workspace/:id/sessions/*", async (c, next) => refusal(c.req.param("id")) ?? next());
  worker.use("/workspace/:id/sessions", async (c, next) => refusal(c.req.param("id")) ?? next());
  worker.route("/workspace/:id/sessions", native);
  worker.all("/workspace/:id/opencode/*", (c) => mount(c, "workspace"));
  worker.all("/w/:id/opencode/*", (c) => mount(c, "w"));

  return {
    resolver,
    worker,
    /**
     * Takes the engine down or brings it back (restarted). Down, the mount answers 500
     * `internal_error`; the echo engine dies as opencode does when killed: running turns are
     * abandoned (their replies never complete), waiting requests and event streams end.
     */
    setEngineDown: (down: boolean) => {
      if (down && !state.engineDown) echo?.crash();
      state.engineDown = down;
    },
    /** Cuts every open event stream (a network blip): listeners reconnect and hear only what follows. */
    cutEventStreams: () => {
      echo?.cutEventStreams();
      for (const stream of streams) stream.abort();
      streams.clear();
    },
    /** Open engine event streams (echo engine only). */
    engineEventStreams: () => echo?.eventStreams() ?? 0,
    /** Every prompt the engine accepted, oldest first (echo engine only; ids and model, no text). */
    receivedPrompts: () => echo?.receivedPrompts() ?? [],
    /** Every call the echo engine made through an MCP entry: the tool, the entry and its credential (echo engine only). */
    mcpCalls: () => echo?.mcpCalls() ?? [],
    close: () => echo?.close(),
    workspaceId,
    workerId,
  };
}

async function proxy(request: Request, url: string, directory: string, streams: Set<AbortController>): Promise<Response> {
  const cut = new AbortController();
  if (new URL(url).pathname.endsWith("/event")) {
    streams.add(cut);
    request.signal.addEventListener("abort", () => streams.delete(cut));
  }
  const upstream = await fetch(url, {
    method: request.method,
    headers: {
      "content-type": request.headers.get("content-type") ?? "application/json",
      accept: request.headers.get("accept") ?? "application/json",
      "x-opencode-directory": directory,
    },
    signal: AbortSignal.any([request.signal, cut.signal]),
    ...(["GET", "HEAD"].includes(request.method) ? {} : { body: await request.arrayBuffer() }),
  });
  const headers = new Headers(upstream.headers);
  for (const hop of ["content-encoding", "content-length", "transfer-encoding", "connection"]) headers.delete(hop);
  return new Response(upstream.body ? quietOnAbort(upstream.body, request.signal) : null, { status: upstream.status, headers });
}

/** The upstream body, ended quietly when the client goes away (an event stream's usual end). */
function quietOnAbort(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        if (signal.aborted) controller.close();
        else controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
