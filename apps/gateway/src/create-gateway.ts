import { createCloudTarget, type WorkerResolver } from "@openwork/cloud-target";
import { createDesktopChannel, type DesktopTimings, migrateDesktopTarget, postgresWakeBus, type StreamLimits, type WakeBus } from "@openwork/desktop-target";
import { createEchoTarget } from "@openwork/echo-target";
import { createMemberSlots, createRemoteSessionSource } from "@openwork/mcp-capability";
import {
  createSessionLedger,
  type Logger,
  type MemberScope,
  type RateLimit,
  recordObservedStates,
  silentLogger,
  type SpawnRules,
  type Target,
} from "@openwork/remote-session-core";
import { BODY_TOO_LARGE_HEADERS, BodyTooLarge, MCP_BODY_BYTES, withBodyWithin } from "@openwork/remote-session-core/wire";
import { createSessionPush } from "@openwork/session-push";
import { bearerToken } from "@openwork/runner-protocol/server";
import { Hono } from "hono";
import type { Sql } from "postgres";
import { type DevMember, userIdOf } from "./dev-members.js";
import type { McpAuth, McpEndpointFactory } from "./mcp-endpoint.js";
import { mcpEndpointV2 } from "./mcp-endpoint-v2.js";
import { answerPageRoutes } from "./answer-page.js";
import { createDrainWake } from "./drain-wake.js";
import { ANSWER_PATH, describeForAnswer, recipientContext } from "./answer-requests.js";
import { memberNotifyRoutes } from "./member-notify-routes.js";
import { createMetrics } from "./metrics.js";
import { type GatewayNotifyOptions, gatewayAnswerLinks, sentNotificationsLog, startNotifications } from "./notifications.js";
import { createMemberGate, mcpMemberKey, rateLimited, whenBodyEnds } from "./member-gate.js";
import { DEFAULT_MEMBER_LIMITS, type MemberLimits } from "./member-limits.js";
import { createRunnerStreamGate } from "./runner-stream-gate.js";
import { createRequestGuard } from "./request-guard.js";
import { sameSecret } from "./same-secret.js";
import { createSessionCredentialAuth, toSessionMcp } from "./session-credential-auth.js";
import { StartupError } from "./startup-errors.js";
import { unexpectedErrorResponse } from "./unexpected-error.js";

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
  /** What one member may hold or start on one process (waiting reads, push streams, MCP sessions, runner streams). */
  memberLimits?: Partial<MemberLimits>;
  /** How long a session may wait on the human before its reads call the request overdue. Default 15 min. */
  inputTimeoutMs?: number;
  /** The MCP endpoint: default `@modelcontextprotocol/server` 2.x (`mcpEndpointV2()`, which can add a host's own tools). */
  mcpEndpoint?: McpEndpointFactory;
  /**
   * Push: stateful MCP sessions (in PostgreSQL) whose clients subscribe to `remote-session://`
   * resources and hear `notifications/resources/updated` on their GET stream. Default: on with the
   * default endpoint, off with a custom `mcpEndpoint`.
   */
  push?: boolean;
  logger?: Logger;
  /**
   * Notifications to members (webhooks; email with `notify.smtp`): the outbox drain runs on every
   * replica, members set their channels through the member routes.
   */
  notify?: GatewayNotifyOptions;
  /** The desktop channel's timings (lease, heartbeat, sweep, presence, claim deadline…) and the cloud's budget (tests shorten them). */
  timings?: Partial<DesktopTimings> & { cloudBudgetMs?: number };
}

const MCP_PATH = "/mcp/agent";

/**
 * The reference gateway, composed from the packages: an MCP endpoint with den-api's two tools,
 * the desktop runner routes, the member routes, and the sweeper. Wiring only; rules live in the packages.
 */
export async function createGateway(options: GatewayOptions) {
  const logger = options.logger ?? silentLogger;
  const { sql } = options;
  await migrateDesktopTarget(sql);
  const { cloudBudgetMs, ...timings } = options.timings ?? {};
  const memberLimits: MemberLimits = { ...DEFAULT_MEMBER_LIMITS, ...options.memberLimits };
  const gate = createMemberGate();
  const mcpInFlight = createMemberSlots(memberLimits.mcpRequestsInFlight);
  const runnerStreamGate = createRunnerStreamGate({ gate, limits: memberLimits, secret: options.runnerTokenSecret });

  const byToken = (kind: "mcpToken" | "sessionToken", token: string) => options.members().find((m) => sameSecret(token, m[kind]));
  const verifyMcpToken =
    options.verifyMcpToken ??
    (async (token: string): Promise<McpAuth | null> => {
      const member = byToken("mcpToken", token);
      return member
        ? {
            token,
            clientId: member.name,
            scopes: member.scopes,
            expiresAt: Math.floor(Date.now() / 1000) + 3600,
            // No memberId for someone no longer an active member: den-api's `member: null`.
            extra: { organizationId: member.organizationId, userId: userIdOf(member), ...(member.active === false ? {} : { memberId: member.memberId }) },
          }
        : null;
    });
  const sessionMember = (request: Request) => byToken("sessionToken", bearerOf(request));
  const isActive = async (scope: MemberScope) =>
    options.members().some((m) => m.organizationId === scope.organizationId && m.memberId === scope.memberId && m.active !== false);
  // The engines of remote sessions call MCP with their session's own credential: what they create is that session's.
  const sessionCredentials = createSessionCredentialAuth({
    secret: options.runnerTokenSecret,
    mcpUrl: `${options.baseUrl}${MCP_PATH}`,
    isActive,
    scopesOf: async (scope) => options.members().find((m) => m.organizationId === scope.organizationId && m.memberId === scope.memberId)?.scopes ?? [],
  });

  // The default bus made here rather than in the channel: its session hints also wake the notification drain.
  const drainWake = createDrainWake();
  const desktop = createDesktopChannel({
    sql,
    bus: drainWake.observe(options.wakeBus ?? postgresWakeBus({ sql, ...(options.listenSql ? { listen: options.listenSql } : {}) })),
    ...(options.listenSql ? { listen: options.listenSql } : {}),
    ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}),
    timings,
    routes: {
      secret: options.runnerTokenSecret,
      baseUrl: options.baseUrl,
      // Our protocol, and OpenWork's runner channel for the OpenWork desktops already installed.
      dialects: ["desktop-runner", "openwork"],
      ...(options.openworkBasePaths ? { openworkBasePaths: options.openworkBasePaths } : {}),
      proxyTrust: { origins: options.trustedProxyOrigins ?? [], prefix: "/api/den" },
      authenticateMember: async (request) => {
        const member = sessionMember(request);
        return member ? { organizationId: member.organizationId, memberId: member.memberId } : null;
      },
      isActiveMember: isActive,
      sessionMcp: (subject) => toSessionMcp(sessionCredentials.issue(subject)),
      onClaimed: (waitedMs) => metrics.claimed(waitedMs),
    },
    sweeper: { onSweep: (moved) => metrics.swept(moved) },
    logger,
  });
  const { hub, routes: runnerRoutes } = desktop;
  // Read at scrape time, once the gateway serves: the drain starts below, after the source it describes with.
  const metrics = createMetrics({ sql, hub, notifications: () => notifications.drain.stats() });
  await desktop.start().catch(async (error: unknown) => {
    await desktop.close();
    throw new StartupError(`${options.wakeBus ? "NATS_URL" : "LISTEN_DATABASE_URL"}: ${error instanceof Error ? error.message : String(error)}`);
  });
  const targets: Target[] = [desktop.target];
  const cloud = options.cloudResolver
    ? createCloudTarget({
        resolver: options.cloudResolver,
        isCloudEnabled: async (scope) => options.cloudEnabled(scope.organizationId),
        sessionMcp: (subject) => sessionCredentials.issue(subject),
        // A turn's end (or ask) reaches the ledger, and so its member's notifications, with no read.
        onObserved: recordObservedStates(createSessionLedger(sql), logger),
        logger,
        ...(options.webUrlTemplate ? { webUrlTemplate: options.webUrlTemplate } : {}),
        ...(cloudBudgetMs ? { budgetMs: cloudBudgetMs } : {}),
      })
    : undefined;
  if (cloud) targets.unshift(cloud);
  if (options.echoTarget) targets.push(createEchoTarget());
  const source = createRemoteSessionSource({
    targets,
    defaultTarget: "cloud",
    ledger: createSessionLedger(sql),
    logger,
    ...(options.createRateLimit ? { createRateLimit: options.createRateLimit } : {}),
    ...(options.sendRateLimit ? { sendRateLimit: options.sendRateLimit } : {}),
    ...(options.spawnRules ? { spawnRules: options.spawnRules } : {}),
    ...(options.inputTimeoutMs ? { inputTimeoutMs: options.inputTimeoutMs } : {}),
    waitingReadsPerMember: memberLimits.waitingReads,
    // A read of a waiting session says which notifications went out for it (`notified`).
    notificationLog: sentNotificationsLog(sql, (scope) => {
      const member = options.members().find((m) => m.organizationId === scope.organizationId && m.memberId === scope.memberId);
      return member ? userIdOf(member) : null;
    }),
  });
  // After the core and desktop migrations, into the same schema; every replica drains the outbox.
  const notify = { ...options.notify, runnerTokenSecret: options.runnerTokenSecret };
  const answerLinks = gatewayAnswerLinks(sql, notify);
  const describe = describeForAnswer({ source, links: answerLinks, members: options.members, baseUrl: options.baseUrl });
  const notifications = await startNotifications(
    sql,
    {
      ...notify,
      describe,
      ...(options.notify?.wakeOnHints === false ? {} : { wake: drainWake.wake }),
      ...(options.inputTimeoutMs ? { overdueAfterMs: options.inputTimeoutMs } : {}),
    },
    logger,
  ).catch(async (error: unknown) => {
    cloud?.close();
    await desktop.close();
    throw error;
  });

  const push =
    (options.push ?? !options.mcpEndpoint)
      ? createSessionPush({
          sql,
          hub,
          source,
          logger,
          limits: memberLimits,
          admitOpen: (auth) => gate.take(`mcp-open\u0000${mcpMemberKey(auth)}`, memberLimits.mcpSessionOpens),
        })
      : null;
  await push?.start();
  const mcpEndpoint = push ? push.endpoint(mcpEndpointV2(push.registerResources)(push.source)) : (options.mcpEndpoint ?? mcpEndpointV2())(source);
  const resourceMetadataUrl = `${options.baseUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;
  const protectedResource = {
    resource: `${options.baseUrl}${MCP_PATH}`,
    // Advertised only when the host serves one: a client told of an authorization server that
    // is not there reports an OAuth failure instead of "this token is not valid".
    ...(options.authorizationServers?.length ? { authorization_servers: options.authorizationServers } : {}),
    scopes_supported: ["mcp:read", "mcp:write"],
    bearer_methods_supported: ["header"],
    resource_name: "OpenWork remote sessions (reference gateway)",
  };
  const unauthorized = (description: string) =>
    Response.json(
      { error: "invalid_token", error_description: description },
      {
        status: 401,
        headers: { "www-authenticate": `Bearer error="invalid_token", error_description="${description}", resource_metadata="${resourceMetadataUrl}"` },
      },
    );

  const guard = createRequestGuard({ baseUrl: options.baseUrl, ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}) });
  const app = new Hono();
  // One answer to an unexpected error for every route family mounted here (MCP and push, the
  // runner routes, metadata, health and metrics): the typed body, its referenceId in the log.
  app.onError((error, c) => unexpectedErrorResponse(logger, routeFamilyOf(c.req.path, runnerRoutes.prefixes), c.req.raw, error));
  app.notFound((c) => c.json({ error: "not_found", message: "no such route on this gateway", retryable: false }, 404));
  app.use("*", async (c, next) => guard(c.req.raw) ?? next());
  app.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, (c) => c.json(protectedResource));
  app.get(`${MCP_PATH}/.well-known/oauth-protected-resource`, (c) => c.json(protectedResource));
  // Operational figures for dashboards and the benchmarks: counts and bytes, nothing per member.
  app.get("/health", (c) => {
    const { rss, heapUsed } = process.memoryUsage();
    return c.json({ ok: true, ...hub.stats(), ...push?.stats(), memory: { rss, heapUsed } });
  });
  // Prometheus text: operators scrape it; it names no member.
  app.get("/metrics", async (c) => c.text(await metrics.render(), 200, { "content-type": "text/plain; version=0.0.4" }));
  app.all(MCP_PATH, async (c) => {
    const token = bearerOf(c.req.raw);
    if (!token) return unauthorized("a bearer token is required");
    // A session credential is decided by its own verifier only: a forged one never reaches the member tokens'.
    const authInfo = (await sessionCredentials.verify(token)) ?? (sessionCredentials.owns(token) ? null : await verifyMcpToken(token));
    if (!authInfo) return unauthorized("this token is not valid for this gateway");
    if (c.req.method === "GET" && !push) return c.json({ error: "method_not_allowed", message: "this endpoint is stateless: POST JSON-RPC" }, 405);
    // Before an MCP server is built for it: a member's flood of requests is refused for the cost of a 429.
    const release = mcpInFlight.enter(mcpMemberKey(authInfo));
    if (!release)
      return rateLimited(`at most ${memberLimits.mcpRequestsInFlight} MCP requests of one member are answered at once; retry after retryAfterMs`, 1_000);
    c.req.raw.signal.addEventListener("abort", release, { once: true });
    try {
      // The SDK's transports read a body whole: it is read here first, no further than its limit.
      const request = await withBodyWithin(c.req.raw, MCP_BODY_BYTES);
      return whenBodyEnds(await mcpEndpoint(request, authInfo), release);
    } catch (error) {
      release();
      if (error instanceof BodyTooLarge) return c.json({ error: error.code, message: error.message, retryable: false }, 413, BODY_TOO_LARGE_HEADERS);
      throw error;
    }
  });
  // The member's notification channels: session tokens only, so no MCP client (no agent) reaches them.
  app.route(
    "/member/notify",
    memberNotifyRoutes({
      sql,
      notifications,
      authenticate: async (request) => {
        const member = sessionMember(request);
        return member && member.active !== false ? { organizationId: member.organizationId, userId: userIdOf(member) } : null;
      },
      unexpected: (request, error) => unexpectedErrorResponse(logger, "gateway member routes", request, error),
    }),
  );
  // A notification's answer link: the member answers one pending request in a browser, no sign-in.
  app.route(
    ANSWER_PATH,
    answerPageRoutes({
      source,
      links: answerLinks,
      contextOf: (grant) => recipientContext(options.members, grant),
      secureCookies: options.baseUrl.startsWith("https:"),
      nonceSecret: options.runnerTokenSecret,
      logger,
    }),
  );
  for (const prefix of runnerRoutes.prefixes) {
    app.all(prefix, (c) => runnerRoutes.fetch(c.req.raw));
    app.all(`${prefix}/*`, (c) => runnerStreamGate(c.req.raw) ?? runnerRoutes.fetch(c.req.raw));
  }

  return {
    app,
    fetch: (request: Request) => app.fetch(request),
    source,
    hub,
    mcpUrl: `${options.baseUrl}${MCP_PATH}`,
    push,
    notifications,
    close: async () => {
      await push?.close();
      await notifications.drain.close();
      cloud?.close();
      await desktop.close();
    },
  };
}

/** Which route family a path belongs to, for the log line of an unexpected error. */
function routeFamilyOf(path: string, runnerPrefixes: readonly string[]): string {
  if (path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)) return "gateway mcp";
  if (runnerPrefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return "gateway runner routes";
  return "gateway";
}

function bearerOf(request: Request): string {
  return bearerToken(request.headers.get("authorization"));
}
