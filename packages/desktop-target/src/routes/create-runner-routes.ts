import { errorFacts, newReferenceId, silentLogger } from "@openwork/remote-session-core";
import { normalizeAudience, RUNNER_PATHS, RUNNER_ROUTE_PREFIX } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";
import { DEFAULT_PRESENCE_WINDOW_MS } from "../presence.js";
import { MAX_TASK_EVENT_BYTES } from "../store/append-events.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { checkRegistration, verifyRunner } from "./authenticate-runner.js";
import { handleEventsStream } from "./handle-events-stream.js";
import { handlePresence } from "./handle-presence.js";
import { handleEnableRunner, handleListRunners, handleRenameRunner, handleRevokeRunner } from "./handle-runner-admin.js";
import { handleClaim, handleClaimNext, handleComplete, handleHeartbeat, handleTaskEvents, handleWork } from "./handle-runner-requests.js";
import { handleToken } from "./handle-token.js";
import type { OpenworkContext } from "./openwork/openwork-call.js";
import { createOpenworkRoutes } from "./openwork/openwork-routes.js";
import type { RouteContext, RunnerRoutesOptions } from "./route-context.js";
import { errorResponse, refusalResponse } from "./to-response.js";

/** The runner routes as Fetch-standard handlers, mountable in Hono, node:http or anything else. */
export interface RunnerRoutes {
  /** Answers a request of a served dialect, or returns null for any other path. */
  handle(request: Request): Promise<Response | null>;
  /** Like `handle`, with a 404 for other paths. */
  fetch(request: Request): Promise<Response>;
  /** The path prefixes served (mount each with `/*`). */
  readonly prefixes: readonly string[];
}

/** OpenWork's runner-channel prefixes (served when the `openwork` dialect is on). */
export const OPENWORK_PREFIXES = [
  "/v1/automation-runners",
  "/v1/automation-runner",
  "/v1/automation-runs",
  "/v1/remote-session-commands",
  "/v1/remote-session-requests",
  "/v1/session-runners",
] as const;

/**
 * Where OpenWork's channel is served by default: at the root, and under `/api/den` — the base URL
 * an unmodified OpenWork desktop always uses (`<origin>/api/den`).
 */
export const OPENWORK_BASE_PATHS = ["", "/api/den"] as const;

type TaskAction = (ctx: RouteContext, runner: RunnerIdentity, taskId: string, request: Request) => Promise<Response>;
const TASK_ACTIONS: Record<string, TaskAction> = {
  claim: handleClaim,
  heartbeat: handleHeartbeat,
  events: handleTaskEvents,
};

// Task ids are gateway ids (`rst_…`); anything else cannot name a task.
const TASK_PATH = /^\/tasks\/(rst_[0-9a-z]{26})\/(claim|heartbeat|events|complete)$/;
// Runner ids as registered (8–160 characters, no slash).
const RUNNER_PATH = /^\/runners\/([^/]{8,160})$/;
const ENABLE_PATH = /^\/runners\/([^/]{8,160})\/enable$/;

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
  const openwork = dialects.includes("openwork")
    ? createOpenworkRoutes({ ...ctx, sessionRunnerTargets: options.sessionRunnerTargets ?? (async () => false) }, basePaths)
    : null;
  const prefixes = [
    ...(dialects.includes("desktop-runner") ? [ours] : []),
    ...(openwork ? basePaths.flatMap((base) => OPENWORK_PREFIXES.map((prefix) => `${base}${prefix}`)) : []),
  ];
  const presenceWindowMs = options.presenceWindowMs ?? DEFAULT_PRESENCE_WINDOW_MS;

  const route = async (request: Request, prefix: string, path: string): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (path === "/token" && method === "POST") return handleToken(ctx, request, prefix);
    if (path === "/presence" && method === "GET") return handlePresence(ctx, request, presenceWindowMs);
    if (path === "/runners" && method === "GET") return handleListRunners(ctx, request, presenceWindowMs);
    const owned = RUNNER_PATH.exec(path);
    if (owned && method === "PATCH") return handleRenameRunner(ctx, request, decodePathSegment(owned[1]!));
    if (owned && method === "DELETE") return handleRevokeRunner(ctx, request, decodePathSegment(owned[1]!));
    const enable = ENABLE_PATH.exec(path);
    if (enable && method === "POST") return handleEnableRunner(ctx, request, decodePathSegment(enable[1]!));
    const task = TASK_PATH.exec(path);
    const known = path === "/work" || path === "/events" || path === RUNNER_PATHS.claimNext || task !== null;
    if (!known) throw new ChannelRefusal("not_found", "no such route");
    const verified = await verifyRunner(ctx, request, "desktop-runner");
    // A completion checks the registration in its own transaction (one round trip fewer).
    if (task?.[2] === "complete" && method === "POST") return handleComplete(ctx, verified, task[1]!, request);
    const runner = await checkRegistration(ctx.sql, verified);
    if (path === "/work" && method === "GET") return handleWork(ctx, runner);
    if (path === RUNNER_PATHS.claimNext && method === "POST") return handleClaimNext(ctx, runner, request);
    if (path === "/events" && method === "GET") return handleEventsStream(ctx, runner, request);
    if (task && method === "POST") return TASK_ACTIONS[task[2]!]!(ctx, runner, task[1]!, request);
    throw new ChannelRefusal("not_found", "no such route");
  };

  const handle = async (request: Request): Promise<Response | null> => {
    const { pathname } = new URL(request.url);
    const served = dialects.includes("desktop-runner") && (pathname === ours || pathname.startsWith(`${ours}/`));
    if (!served) return openwork ? openwork.handle(request) : null;
    try {
      return await route(request, ours, pathname.slice(ours.length));
    } catch (error) {
      if (error instanceof ChannelRefusal) return refusalResponse(error);
      const referenceId = newReferenceId();
      ctx.logger.error("desktop runner: request failed", { path: pathname, referenceId, error: errorFacts(error) });
      return errorResponse("internal_error", "the gateway could not answer; retry", { referenceId });
    }
  };

  return {
    handle,
    fetch: async (request) => (await handle(request)) ?? errorResponse("not_found", "no such route"),
    prefixes,
  };
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ChannelRefusal("not_found", "no such desktop");
  }
}
