import { createHmac } from "node:crypto";
import type { TracerProvider } from "@opentelemetry/api";
import type { WorkerResolver } from "@openwork/cloud-target";
import type { DesktopTimings, HostWorkKind, OpenworkRuns, StreamLimits, WakeBus } from "@openwork/desktop-target";
import { createEchoTarget } from "@openwork/echo-target";
import type { Logger, RateLimit, SpawnRules } from "@openwork/remote-session-core";
import { silentLogger } from "@openwork/remote-session-core";
import {
  createRemoteSessionHost,
  originGuard,
  type HostNotifyOptions,
  type McpAuth,
  type MemberLimits,
  type ProcessLimits,
  type RemoteSessionHostOptions,
  unexpectedErrorResponse,
  WakeBusUnavailable,
} from "@openwork/remote-session-host";
import { Hono } from "hono";
import type { Sql } from "postgres";
import { devAuth } from "./dev-auth.js";
import type { BudgetRules, BudgetScope } from "@openwork/mcp-capability";
import type { DevMember } from "./dev-members.js";
import { createHostMcpEndpoint, type HostMcpEndpointOptions } from "@openwork/remote-session-host/server-v2";
import { type McpEndpointFactory, SERVER_INFO } from "./mcp-endpoint.js";
import { prometheusMetrics } from "./prometheus-metrics.js";
import { StartupError } from "./startup-errors.js";

export interface GatewayOptions {
  sql: Sql;
  /**
   * A client for the wake hub's LISTEN, connected directly to the primary (never through a
   * pooler in transaction mode, which drops LISTEN silently). Default `sql`. Proved at start.
   */
  listenSql?: Sql;
  /**
   * The bus wake-up hints travel on between gateway processes, e.g. NATS
   * (`@openwork/wake-bus-nats`). Default: PostgreSQL LISTEN/NOTIFY on `listenSql`. The gateway
   * closes it when it closes.
   */
  wakeBus?: WakeBus;
  /** The public base URL (the runner-token audience and the MCP resource). */
  baseUrl: string;
  /** Open runner streams one process keeps per runner and per member (the newest wins). */
  streamLimits?: Partial<StreamLimits>;
  /** OAuth authorization servers to advertise in the protected-resource metadata; none by default (the reference gateway serves none). */
  authorizationServers?: readonly string[];
  /** Browser origins allowed besides the base URL's own (DNS-rebinding protection). */
  allowedOrigins?: readonly string[];
  /**
   * Where OpenWork's runner channel is served: base paths, each with all its routes. Default the
   * root and `/api/den` (the base URL unmodified OpenWork desktops use).
   */
  openworkBasePaths?: readonly string[];
  /**
   * Public origins of proxies in front of the gateway (e.g. `https://app.example.com`) whose
   * forwarded headers are believed: a mint through one with `X-Forwarded-Prefix: /api/den` names
   * `<origin>/api/den` as its audience, as den-api does. Default none.
   */
  trustedProxyOrigins?: readonly string[];
  /** Members and their dev credentials (the default token verifiers read them). */
  members: () => readonly DevMember[];
  /**
   * Verifies an MCP bearer token; null refuses it. Default: the dev members' `mcpToken`s. A real
   * deployment plugs its OAuth introspection in here.
   */
  verifyMcpToken?: (token: string) => Promise<McpAuth | null>;
  /** Whether an organization has cloud on; read on every call. */
  cloudEnabled: (organizationId: string) => boolean;
  runnerTokenSecret: string;
  /** The cloud worker resolver; without one the gateway offers desktops only. */
  cloudResolver?: WorkerResolver;
  /** Also offer the example echo target (`@openwork/echo-target`): a third target the capability knows only through the port. */
  echoTarget?: boolean;
  webUrlTemplate?: string;
  /** Creates per member per window (default 32 a minute). */
  createRateLimit?: RateLimit;
  /** Sends per member per window (default 120 a minute). */
  sendRateLimit?: RateLimit;
  /** How deep and how wide sessions may start sessions through their engines' credentials (default depth 3, 32 live per spawner). */
  spawnRules?: Partial<SpawnRules>;
  /** Budgets of the sessions a member starts: a default, and a ceiling a create may not ask past. */
  budgetRules?: (scope: BudgetScope) => BudgetRules | Promise<BudgetRules>;
  /** What one member may hold or start on one process (waiting reads, push streams, MCP sessions, runner streams). */
  memberLimits?: Partial<MemberLimits>;
  /** What the process holds and opens for every member together (its wake-stream budget, its stream-open rate). */
  processLimits?: Partial<ProcessLimits>;
  /** The serving process's connection counts (requests, streams, refusals), shown by `/health`. */
  connectionStats?: () => Record<string, number>;
  /** How long a session may wait on the human before its reads call the request overdue. Default 15 min. */
  inputTimeoutMs?: number;
  /** The MCP endpoint: default the host's on `@modelcontextprotocol/server` 2.x, both MCP eras (`createHostMcpEndpoint`). */
  mcpEndpoint?: McpEndpointFactory;
  /** Adds the host's own tools to the default endpoint's server of each request (a benchmark's no-op baseline). */
  configureMcp?: HostMcpEndpointOptions["configure"];
  /**
   * Push: stateful MCP sessions (in PostgreSQL) whose clients subscribe to `remote-session://`
   * resources and hear `notifications/resources/updated` on their GET stream. Default: on with the
   * default endpoint, off with a custom `mcpEndpoint`.
   */
  push?: boolean;
  logger?: Logger;
  /** Where spans go (capability calls, claims, runners' posts): an OpenTelemetry SDK's provider. Default none recorded. */
  tracerProvider?: TracerProvider;
  /**
   * Notifications to members (webhooks; email with `notify.smtp`): the outbox drain runs on every
   * replica, members set their channels through the member routes.
   */
  notify?: Omit<HostNotifyOptions, "userOf" | "memberOf">;
  /** The desktop channel's timings (lease, heartbeat, sweep, presence, claim deadline…) and the cloud's budget (tests shorten them). */
  timings?: Partial<DesktopTimings> & { cloudBudgetMs?: number };
  /** Work kinds of the host's own on the runner channel (a test host's Automation runs). Default: none. */
  workKinds?: readonly HostWorkKind[];
  /** The host's Automation runs for OpenWork desktops on OpenWork's paths (a test host's). Default: none. */
  openworkRuns?: OpenworkRuns;
}

const MCP_PATH = "/mcp/agent";

/**
 * The reference gateway: the host package's composition (`createRemoteSessionHost`) over the dev
 * members, served with an MCP endpoint of den-api's two tools, the runner routes, the member's
 * notification routes, the answer page, health and metrics. Wiring only; rules live in the packages.
 */
export async function createGateway(options: GatewayOptions) {
  const logger = options.logger ?? silentLogger;
  const metrics = prometheusMetrics();
  const host = createRemoteSessionHost({
    ...hostOptionsOf(options, logger),
    telemetry: { meterProvider: metrics.meterProvider, ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}) },
  });
  await host.start().catch((error: unknown) => {
    if (!(error instanceof WakeBusUnavailable)) throw error;
    throw new StartupError(`${options.wakeBus ? "NATS_URL" : "LISTEN_DATABASE_URL"}: ${error.message}`);
  });
  const sessions = createHostMcpEndpoint(host, {
    serverInfo: SERVER_INFO,
    ...(options.configureMcp ? { configure: options.configureMcp } : {}),
    // On here: a 2026-era client's human answers a session's question in the client's own UI.
    elicitation: { secret: elicitationSecretOf(options.runnerTokenSecret) },
  });
  const mcpEndpoint = options.mcpEndpoint ? options.mcpEndpoint(host.source) : sessions.endpoint;
  const app = new Hono();
  // One answer to an unexpected error for every route family mounted here (MCP and push, the
  // runner routes, metadata, health and metrics): the typed body, its referenceId in the log.
  app.onError((error, c) => unexpectedErrorResponse(logger, routeFamilyOf(c.req.path, host.runnerPrefixes), c.req.raw, error));
  app.notFound((c) => c.json({ error: "not_found", message: "no such route on this gateway", retryable: false }, 404));
  app.use("*", originGuard({ baseUrl: options.baseUrl, ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}) }));
  app.route(
    "/",
    host.mcpRoutes({
      path: MCP_PATH,
      endpoint: mcpEndpoint,
      ...(options.authorizationServers ? { authorizationServers: options.authorizationServers } : {}),
      resourceName: "OpenWork remote sessions (reference gateway)",
    }),
  );
  // Operational figures for dashboards and the benchmarks: counts and bytes, nothing per member.
  app.get("/health", (c) => {
    const { rss, heapUsed } = process.memoryUsage();
    const connections = options.connectionStats?.();
    return c.json({ ok: true, ...host.hub.stats(), ...host.push?.stats(), memory: { rss, heapUsed }, ...(connections ? { connections } : {}) });
  });
  // Prometheus text: operators scrape it; it names no member.
  app.get("/metrics", async (c) => c.text(await metrics.text(), 200, { "content-type": "text/plain; version=0.0.4" }));
  const { notifications } = host;
  if (notifications) {
    // The member's notification channels: session tokens only, so no MCP client (no agent) reaches them.
    app.route("/member/notify", notifications.memberRoutes);
    // A notification's answer link: the member answers one pending request in a browser, no sign-in.
    if (notifications.answerPage) app.route(notifications.answerPath, notifications.answerPage);
  }
  app.route("/", host.runnerRoutes);
  return {
    app,
    fetch: (request: Request) => app.fetch(request),
    source: host.source,
    hub: host.hub,
    mcpUrl: `${options.baseUrl}${MCP_PATH}`,
    push: host.push,
    notifications: notifications!,
    host,
    close: async () => {
      await sessions.close();
      await host.close();
      await metrics.close();
    },
  };
}

/** The host's options: the reference gateway's settings, its dev members as the host's directory. */
function hostOptionsOf(options: GatewayOptions, logger: Logger): RemoteSessionHostOptions {
  const auth = devAuth(options.members);
  const { cloudBudgetMs, ...timings } = options.timings ?? {};
  return {
    sql: options.sql,
    // The reference gateway's tables are in the handle's own schema (public).
    schema: "public",
    ...(options.listenSql ? { listenSql: options.listenSql } : {}),
    ...(options.wakeBus ? { bus: options.wakeBus } : {}),
    baseUrl: options.baseUrl,
    desktop: {
      secret: options.runnerTokenSecret,
      authenticateMember: auth.authenticateMember,
      timings,
      ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}),
      ...(options.workKinds ? { workKinds: options.workKinds } : {}),
      routes: {
        // Our protocol, and OpenWork's runner channel for the OpenWork desktops already installed.
        dialects: ["desktop-runner", "openwork"],
        ...(options.openworkBasePaths ? { openworkBasePaths: options.openworkBasePaths } : {}),
        proxyTrust: { origins: options.trustedProxyOrigins ?? [], prefix: "/api/den" },
        ...(options.openworkRuns ? { openworkRuns: options.openworkRuns } : {}),
      },
    },
    ...(options.cloudResolver
      ? {
          cloud: {
            resolver: options.cloudResolver,
            isCloudEnabled: async (scope) => options.cloudEnabled(scope.organizationId),
            ...(options.webUrlTemplate ? { webUrlTemplate: options.webUrlTemplate } : {}),
            ...(cloudBudgetMs ? { budgetMs: cloudBudgetMs } : {}),
          },
        }
      : {}),
    isActiveMember: auth.isActiveMember,
    verifyMemberToken: options.verifyMcpToken ?? auth.verifyMemberToken,
    // The engines of remote sessions call MCP with their session's own credential: what they create is that session's.
    sessionCredentials: { mcpUrl: `${options.baseUrl}${MCP_PATH}`, scopesOf: auth.scopesOf },
    ...(options.echoTarget ? { targets: [createEchoTarget()] } : {}),
    defaultTarget: "cloud",
    limits: {
      ...(options.createRateLimit ? { createRateLimit: options.createRateLimit } : {}),
      ...(options.sendRateLimit ? { sendRateLimit: options.sendRateLimit } : {}),
      ...(options.spawnRules ? { spawnRules: options.spawnRules } : {}),
      ...(options.budgetRules ? { budgetRules: options.budgetRules } : {}),
      ...(options.inputTimeoutMs ? { inputTimeoutMs: options.inputTimeoutMs } : {}),
    },
    ...(options.memberLimits ? { memberLimits: options.memberLimits } : {}),
    ...(options.processLimits ? { processLimits: options.processLimits } : {}),
    ...((options.push ?? !options.mcpEndpoint) ? {} : { push: false as const }),
    notifications: { ...options.notify, userOf: auth.userOf, memberOf: auth.memberOf },
    logger,
  };
}

/**
 * The key sealing what the gateway asked a human: derived from the runner-token secret every
 * replica shares (so any replica verifies an answer), and never the same key.
 */
function elicitationSecretOf(runnerTokenSecret: string): string {
  return createHmac("sha256", runnerTokenSecret).update("openwork elicitation requestState").digest("base64url");
}

/** Which route family a path belongs to, for the log line of an unexpected error. */
function routeFamilyOf(path: string, runnerPrefixes: readonly string[]): string {
  if (path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)) return "gateway mcp";
  if (runnerPrefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return "gateway runner routes";
  return "gateway";
}
