import { trace } from "@opentelemetry/api";
import { silentLogger } from "@openwork/remote-session-core";
import { normalizeAudience } from "@openwork/runner-protocol/internal";
import { Hono } from "hono";
import { builtInDialects, createDialectSet } from "../dialects/index.js";
import { resolveTimings } from "../desktop-timings.js";
import { hostWorkKinds } from "../host-work-kind.js";
import { MAX_TASK_EVENT_BYTES } from "../store/append-events.js";
import type { DialectRouteOptions } from "../dialects/dialect.js";
import { createRegistrationCache } from "./registration-cache.js";
import { createStreamPresence } from "./stream-presence.js";
import { createStreamMembership } from "./stream-membership.js";
import { createVerifiedTokens } from "./verified-tokens.js";
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

/**
 * Creates the desktop runner routes (docs/architecture.md, The desktop channel): each registered
 * dialect the host asks for (`dialects`; ours under `/v1/desktop-runner` by default), its Hono app
 * mounted under each of its base paths. Every bad input is a typed 4xx that changes nothing;
 * anything of another member or another runner is a 404.
 */
export function createRunnerRoutes(options: RunnerRoutesOptions & { sessionRunnerTargets?: DialectRouteOptions["sessionRunnerTargets"] }): RunnerRoutes {
  const { presenceWindowMs, leaseMs, heartbeatIntervalMs, keepaliveMs, presenceFlushMs, membershipCheckMs, registrationCacheMs } = resolveTimings(
    options.timings,
  );
  const logger = options.logger ?? silentLogger;
  const registrations = createRegistrationCache({ ttlMs: registrationCacheMs });
  const presence = createStreamPresence({ sql: options.sql, flushMs: presenceFlushMs, logger, released: (runner) => registrations.forget(runner) });
  // Lives as long as the hub (its close drops its subscribers): a revoke on any process ends the
  // runner's streams and empties its cache; a resync (hints may be lost) empties the cache and
  // checks the held streams at once.
  options.hub.subscribeRevokes({
    revoked: (hints) => {
      for (const hint of hints) {
        const runner = { organizationId: hint.o, memberId: hint.m, runnerId: hint.r };
        registrations.forget(runner);
        presence.revoked(runner);
      }
    },
    resync: () => {
      registrations.clear();
      void presence.flush();
    },
  });
  const audiences = [...new Set([options.baseUrl, ...(options.audiences ?? [])].map(normalizeAudience))];
  const ctx: RouteContext = {
    turnEventBytes: MAX_TASK_EVENT_BYTES,
    proxyTrust: { origins: [], prefix: "/api/den" },
    ...options,
    logger,
    dialects: options.dialectSet ?? createDialectSet(builtInDialects()),
    workKinds: hostWorkKinds(options.workKinds),
    tracer: (options.tracerProvider ?? trace.getTracerProvider()).getTracer("@openwork/desktop-target"),
    publisher: options.hub.publisher,
    presenceWindowMs,
    leaseMs,
    heartbeatIntervalMs,
    keepaliveMs,
    presenceFlushMs,
    membershipCheckMs,
    registrationCacheMs,
    registrations,
    presence,
    streamMembership: createStreamMembership({ isActiveMember: options.isActiveMember, intervalMs: membershipCheckMs, logger }),
    tokens: createVerifiedTokens({ secret: options.secret, audiences }),
    audiences,
  };
  const served = new Set(options.dialects ?? [ctx.dialects.all[0]!.name]);
  const app = new Hono();
  app.onError(channelErrors(ctx.logger));
  app.notFound(() => errorResponse("not_found", "no such route"));
  const prefixes: string[] = [];
  for (const dialect of ctx.dialects.all.filter((d) => served.has(d.name))) {
    const mounted = dialect.routes(ctx, { ...options, presenceWindowMs });
    for (const base of mounted.bases) app.route(base || "/", mounted.app);
    prefixes.push(...mounted.prefixes);
  }
  const ours = (pathname: string) => prefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  const handle = async (request: Request) => (ours(new URL(request.url).pathname) ? app.fetch(request) : null);
  return {
    app,
    handle,
    fetch: async (request) => (await handle(request)) ?? errorResponse("not_found", "no such route"),
    prefixes,
  };
}
