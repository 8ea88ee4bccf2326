import { timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { createEchoEngine } from "./echo-engine.js";

export interface WitnessWorkerOptions {
  /** The public base URL of this witness (what the resolver reports as the worker URL). */
  baseUrl: string;
  clientToken: string;
  hostToken: string;
  /** The key den-api's resolver checks (`X-OpenWork-Gateway-Key`). */
  gatewayKey: string;
  /** Mount a real opencode server (its base URL and workspace directory); else the echo engine. */
  opencode?: { url: string; directory: string };
  workspaceId?: string;
  workerId?: string;
  /** Start asleep: the resolver answers `waking` until `wakeDelayMs` after the first resolve. */
  asleep?: boolean;
  wakeDelayMs?: number;
  /** Members that have a worker; others resolve as missing. Default: everyone. */
  hasWorker?: (memberId: string) => boolean;
}

/**
 * A stand-in openwork-server plus den-api's worker resolver, as one Hono app. Where it differs
 * from the real openwork-server: one workspace, no config/skills/approvals routes, tokens compared
 * as given (no scopes), and the resolver route that den-api serves lives here too.
 */
export function createWitnessWorker(options: WitnessWorkerOptions) {
  const workspaceId = options.workspaceId ?? "ws_witness";
  const workerId = options.workerId ?? "wrk_witness";
  const echo = createEchoEngine();
  const state = { asleep: options.asleep ?? false, wakingUntil: null as number | null, wakes: 0 };
  const app = new Hono();

  const equal = (given: string | undefined, expected: string) =>
    given !== undefined && given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  const settle = () => {
    if (state.wakingUntil !== null && Date.now() >= state.wakingUntil) {
      state.asleep = false;
      state.wakingUntil = null;
    }
  };

  app.get("/health", (c) => c.json({ ok: true, version: "witness", asleep: state.asleep }));

  app.get("/v1/cloud/gateway/resolve", (c) => {
    if (!equal(c.req.header("x-openwork-gateway-key"), options.gatewayKey)) return c.json({ code: "cloud_not_found" }, 404);
    const memberId = c.req.query("memberId") ?? "";
    if (options.hasWorker && !options.hasWorker(memberId)) return c.json({ code: "cloud_not_found" }, 404);
    settle();
    if (state.asleep) {
      if (state.wakingUntil === null) {
        state.wakes++;
        state.wakingUntil = Date.now() + (options.wakeDelayMs ?? 3_000);
      }
      return c.json({ status: "waking", workerId, url: null, clientToken: null, hostToken: null, reason: "stopped" });
    }
    return c.json({ status: "ready", workerId, url: options.baseUrl, clientToken: options.clientToken, hostToken: options.hostToken });
  });

  // Everything below is the worker itself: the client token required (the real openwork-server
  // does not check the host token on these routes, so neither does the witness), asleep → 503.
  app.use("/workspaces", async (c, next) => guard(c.req.raw) ?? next());
  app.use("/workspace/*", async (c, next) => guard(c.req.raw) ?? next());
  const guard = (request: Request): Response | undefined => {
    const bearer = (request.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    if (!equal(bearer, options.clientToken)) {
      return Response.json({ code: "unauthorized", message: "Invalid bearer token" }, { status: 401 });
    }
    settle();
    if (state.asleep) return Response.json({ code: "worker_asleep", message: "The worker is stopped" }, { status: 503 });
    return undefined;
  };

  app.get("/workspaces", (c) => {
    const item = { id: workspaceId, name: "Witness workspace", workspaceType: "local" };
    return c.json({ items: [item], workspaces: [item], activeId: workspaceId });
  });

  app.all("/workspace/:id/opencode/*", async (c) => {
    if (c.req.param("id") !== workspaceId) return c.json({ code: "workspace_not_found", message: "Workspace not found" }, 404);
    const url = new URL(c.req.url);
    const path = url.pathname.slice(`/workspace/${workspaceId}/opencode`.length) || "/";
    if (!options.opencode) return echo(c.req.raw, path);
    const upstream = await fetch(`${options.opencode.url}${path}${url.search}`, {
      method: c.req.method,
      headers: {
        "content-type": c.req.header("content-type") ?? "application/json",
        accept: c.req.header("accept") ?? "application/json",
        "x-opencode-directory": options.opencode.directory,
      },
      ...(["GET", "HEAD"].includes(c.req.method) ? {} : { body: await c.req.arrayBuffer() }),
    });
    const headers = new Headers(upstream.headers);
    for (const hop of ["content-encoding", "content-length", "transfer-encoding", "connection"]) headers.delete(hop);
    return new Response(upstream.body, { status: upstream.status, headers });
  });

  return {
    app,
    fetch: (request: Request) => app.fetch(request),
    /** Puts the worker to sleep: it answers 503 until a resolve wakes it. */
    sleep: () => {
      state.asleep = true;
      state.wakingUntil = null;
    },
    stats: () => ({ wakes: state.wakes, asleep: state.asleep }),
    workspaceId,
    workerId,
  };
}
