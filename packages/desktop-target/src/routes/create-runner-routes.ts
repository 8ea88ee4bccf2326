import { silentLogger } from "@openwork/remote-session-core";
import { normalizeAudience, RUNNER_ROUTE_PREFIX } from "@openwork/runner-protocol";
import { Hono } from "hono";
import { desktopRunnerRoutes } from "../dialects/desktop-runner/desktop-runner-routes.js";
import { DEFAULT_PRESENCE_WINDOW_MS } from "../presence.js";
import { MAX_TASK_EVENT_BYTES } from "../store/append-events.js";
import type { OpenworkContext } from "./openwork/openwork-call.js";
import { OPENWORK_PREFIXES, openworkRoutes } from "./openwork/openwork-routes.js";
import type { RouteContext, RunnerRoutesOptions } from "./route-context.js";
import { channelErrors } from "./route-errors.js";
import { errorResponse } from "./to-response.js";

/** The runner routes: a Hono app, and Fetch-standard handlers for node:http or any other host. */
export interface RunnerRoutes {
  /** The routes as a Hono app, every served prefix included: `app.route("/", routes.app)`. */
  readonly app: Hono;
  /** Answers a request of a served dialect, or returns null for any other path. */
  handle(request: Request): Promise<Response | null>;
  /** Like `handle`, with a 404 for other paths. */
  fetch(request: Request): Promise<Response>;
  /** The path prefixes served (mount each with `/*`). */
  readonly prefixes: readonly string[];
}

export { OPENWORK_PREFIXES };

/**
 * Where OpenWork's channel is served by default: at the root, and under `/api/den` — the base URL
 * an unmodified OpenWork desktop always uses (`<origin>/api/den`).
 */
export const OPENWORK_BASE_PATHS = ["", "/api/den"] as const;

/**
 * Creates the desktop runner routes (docs/architecture.md, The desktop channel): our protocol under `/v1/desktop-runner`, and,
 * when asked for (`dialects`), OpenWork's runner channel for OpenWork desktops already installed.
 * Every bad input is a typed 4xx that changes nothing; anything of another member or another
 * runner is a 404.
 */
export function createRunnerRoutes(
  options: RunnerRoutesOptions & { presenceWindowMs?: number; sessionRunnerTargets?: OpenworkContext["sessionRunnerTargets"] },
): RunnerRoutes {
  const ctx: RouteContext = {
    leaseMs: 30_000,
    heartbeatIntervalMs: 10_000,
    keepaliveMs: 15_000,
    membershipCheckMs: 15_000,
    turnEventBytes: MAX_TASK_EVENT_BYTES,
    logger: silentLogger,
    proxyTrust: { origins: [], prefix: "/api/den" },
    ...options,
    publisher: options.hub.publisher,
    audiences: [...new Set([options.baseUrl, ...(options.audiences ?? [])].map(normalizeAudience))],
  };
  const dialects = options.dialects ?? ["desktop-runner"];
  const ours = (options.prefix ?? RUNNER_ROUTE_PREFIX).replace(/\/+$/, "");
  const basePaths = [...new Set((options.openworkBasePaths ?? OPENWORK_BASE_PATHS).map((p) => p.replace(/\/+$/, "")))];
  const app = new Hono();
  app.onError(channelErrors(ctx.logger));
  app.notFound(() => errorResponse("not_found", "no such route"));
  const prefixes: string[] = [];
  if (dialects.includes("desktop-runner")) {
    app.route(ours, desktopRunnerRoutes(ctx, { prefix: ours, presenceWindowMs: options.presenceWindowMs ?? DEFAULT_PRESENCE_WINDOW_MS }));
    prefixes.push(ours);
  }
  if (dialects.includes("openwork")) {
    const openwork = openworkRoutes({ ...ctx, sessionRunnerTargets: options.sessionRunnerTargets ?? (async () => false) });
    for (const base of basePaths) app.route(base || "/", openwork);
    prefixes.push(...basePaths.flatMap((base) => OPENWORK_PREFIXES.map((prefix) => `${base}${prefix}`)));
  }
  const served = (pathname: string) => prefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  const handle = async (request: Request) => (served(new URL(request.url).pathname) ? app.fetch(request) : null);
  return {
    app,
    handle,
    fetch: async (request) => (await handle(request)) ?? errorResponse("not_found", "no such route"),
    prefixes,
  };
}
