import type { Tracer, TracerProvider } from "@opentelemetry/api";
import { BUDGETED_FOLLOW_MS, type CloudTarget, createCloudTarget } from "@openwork/cloud-target";
import { createDesktopChannel, type DesktopChannel, migrateDesktopTarget, postgresWakeBus } from "@openwork/desktop-target";
import { createBuiltinSkillSource, createRemoteSessionSource, type RemoteSessionSource } from "@openwork/mcp-capability";
import { createSessionLedger, DEFAULT_SCHEMA, type Logger, type OnPaused, recordObservedStates, silentLogger } from "@openwork/remote-session-core";
import { createSessionPush, type SessionPush } from "@openwork/session-push";
import { createDrainWake, type DrainWake } from "./drain-wake.js";
import { WakeBusUnavailable } from "./host-errors.js";
import { createHostNotifications } from "./host-notifications.js";
import type { RemoteSessionHost, RemoteSessionHostOptions } from "./host-options.js";
import { createMcpGate, verifyMcpTokenWith } from "./mcp-gate.js";
import { createMcpRoutes } from "./mcp-routes.js";
import { followBudgetedTurns } from "./follow-budgeted-turns.js";
import { createMemberGate, type MemberGate, mcpMemberKey } from "./member-gate.js";
import { DEFAULT_MEMBER_LIMITS, type MemberLimits } from "./member-limits.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { TELEMETRY_SCOPE, telemetryOf } from "./telemetry.js";
import { tracedSource } from "./traced-source.js";
import { sentNotificationsLog } from "./notifications.js";
import { runnerApp } from "./runner-app.js";
import { createRunnerStreamGate } from "./runner-stream-gate.js";
import { defaultProcessLimits } from "./process-limits.js";
import { createSessionCredentialAuth, type SessionCredentialAuth, toSessionMcp } from "./session-credential-auth.js";

/** What every part of one host shares: resolved once in `createRemoteSessionHost`. */
interface HostParts {
  options: RemoteSessionHostOptions;
  logger: Logger;
  schema: string;
  memberLimits: MemberLimits;
  gate: MemberGate;
  credentials: SessionCredentialAuth | null;
  metrics: Metrics;
  /** Spans of capability calls, runner requests and cloud calls. */
  tracer: Tracer;
  tracerProvider: TracerProvider;
  /** Wakes the notification drain on the bus's session hints; null without notifications (or `wakeOnHints: false`). */
  drainWake: DrainWake | null;
}

/**
 * Remote sessions composed for a host: both targets over one database and one desktop channel
 * (its wake hub, runner routes and sweeper, with one set of timings), the capability source, the
 * skill, push, notifications, session credentials and the per-member gates. The capability still
 * knows no target; this package is where they meet, and everything a gateway mounts comes from here.
 */
export function createRemoteSessionHost(options: RemoteSessionHostOptions): RemoteSessionHost {
  const notify = options.notifications;
  const { tracerProvider, meterProvider } = telemetryOf(options.telemetry);
  const parts: HostParts = {
    options,
    logger: options.logger ?? silentLogger,
    schema: options.schema ?? DEFAULT_SCHEMA,
    memberLimits: { ...DEFAULT_MEMBER_LIMITS, ...options.memberLimits },
    gate: createMemberGate(),
    credentials: options.sessionCredentials ? sessionCredentialsOf(options) : null,
    tracer: tracerProvider.getTracer(TELEMETRY_SCOPE),
    tracerProvider,
    metrics: createMetrics({ sql: options.sql, meter: meterProvider.getMeter(TELEMETRY_SCOPE) }),
    drainWake: notify && notify.wakeOnHints !== false ? createDrainWake() : null,
  };
  const channel = desktopChannelOf(parts);
  const cloud = cloudTargetOf(parts);
  const capability = tracedSource(
    createRemoteSessionSource({
      ...options.limits,
      targets: [...(cloud ? [cloud] : []), channel.target, ...(options.targets ?? [])],
      defaultTarget: options.defaultTarget ?? (cloud ? "cloud" : "desktop"),
      ledger: createSessionLedger(options.sql),
      logger: parts.logger,
      waitingReadsPerMember: parts.memberLimits.waitingReads,
      ...(options.audit ? { audit: options.audit } : {}),
      ...(options.auditTimeoutMs === undefined ? {} : { auditTimeoutMs: options.auditTimeoutMs }),
      // A read of a waiting session says which notifications went out for it (`notified`).
      ...(notify ? { notificationLog: sentNotificationsLog(options.sql, notify.userOf) } : {}),
    }),
    parts.tracer,
  );
  const push = options.push === false ? null : sessionPushOf(parts, channel, capability);
  const notifications = notify ? createHostNotifications({ ...parts, notify, source: capability }) : null;
  parts.metrics.observe({ hub: channel.hub, ...(notifications ? { notifications: notifications.stats } : {}) });
  const streamGate = createRunnerStreamGate({
    gate: parts.gate,
    limits: parts.memberLimits,
    process: { ...defaultProcessLimits(), ...options.processLimits },
    streamsOpen: () => channel.hub.stats().runnerStreams,
    secret: options.desktop.secret,
    refused: () => parts.metrics.refused("runner_stream_opens"),
  });
  const verifyMcpToken = verifyMcpTokenWith(parts.credentials, options.verifyMemberToken);
  const mcpGate = createMcpGate(parts.memberLimits, () => parts.metrics.refused("mcp_requests_in_flight"));
  let closing: Promise<void> | null = null;
  const closed = new AbortController();
  const close = () =>
    (closing ??= (async () => {
      closed.abort();
      await push?.close();
      await notifications?.close();
      cloud?.close();
      await channel.close();
    })());

  return {
    source: push?.source ?? capability,
    skills: createBuiltinSkillSource(),
    runnerRoutes: runnerApp(channel.routes, parts.logger, [streamGate, ...(options.desktop.routeMiddleware ?? [])]),
    runnerPrefixes: channel.routes.prefixes,
    push,
    notifications,
    sessionCredentials: parts.credentials,
    verifyMcpToken,
    mcpGate,
    mcpRoutes: (routes) => createMcpRoutes({ baseUrl: options.baseUrl, verifyMcpToken, mcpGate, streams: push !== null }, routes),
    hub: channel.hub,
    desktop: channel,
    start: async () => {
      // A start that fails stops what it had started: the caller has nothing to clean up.
      await startParts(options, parts.schema, channel, push, notifications).catch(async (error: unknown) => {
        await close();
        throw error;
      });
      const followMs = options.cloud?.budgetedFollowMs ?? BUDGETED_FOLLOW_MS;
      if (cloud) void followBudgetedTurns(options.sql, cloud, followMs, parts.logger, closed.signal);
    },
    close,
  };
}

/** Migrates (core, desktop, then push's and notifications' tables), proves the bus, starts push, the drain and the sweeper. */
async function startParts(
  options: RemoteSessionHostOptions,
  schema: string,
  channel: DesktopChannel,
  push: SessionPush | null,
  notifications: { start(): Promise<void> } | null,
): Promise<void> {
  await migrateDesktopTarget(options.sql, { schema });
  await channel.ready.catch((error: unknown) => {
    throw new WakeBusUnavailable(error);
  });
  await push?.start();
  await notifications?.start();
  await channel.start();
}

function sessionCredentialsOf(options: RemoteSessionHostOptions): SessionCredentialAuth {
  const { mcpUrl, scopesOf, ttlMs } = options.sessionCredentials!;
  return createSessionCredentialAuth({ secret: options.desktop.secret, mcpUrl, isActive: options.isActiveMember, scopesOf, ...(ttlMs ? { ttlMs } : {}) });
}

/** The desktop channel, its bus also waking the notification drain, its claims and sweeps counted. */
function desktopChannelOf({ options, logger, credentials, metrics, drainWake, tracerProvider }: HostParts): DesktopChannel {
  const { desktop } = options;
  // The default bus made here rather than in the channel: its session hints also wake the drain.
  const bus = options.bus ?? postgresWakeBus({ sql: options.sql, ...(options.listenSql ? { listen: options.listenSql } : {}) });
  const onSweep = options.sweeper?.onSweep;
  return createDesktopChannel({
    sql: options.sql,
    bus: drainWake ? drainWake.observe(bus) : bus,
    ...(options.listenSql ? { listen: options.listenSql } : {}),
    ...(desktop.timings ? { timings: desktop.timings } : {}),
    ...(desktop.dialects ? { dialects: desktop.dialects } : {}),
    ...(desktop.streamLimits ? { streamLimits: desktop.streamLimits } : {}),
    ...(desktop.workKinds ? { workKinds: desktop.workKinds } : {}),
    routes: {
      ...desktop.routes,
      tracerProvider,
      secret: desktop.secret,
      baseUrl: options.baseUrl,
      authenticateMember: desktop.authenticateMember,
      isActiveMember: options.isActiveMember,
      ...(options.mayUseModel ? { mayUseModel: options.mayUseModel } : {}),
      ...(credentials ? { sessionMcp: (subject) => toSessionMcp(credentials.issue(subject)) } : {}),
      onClaimed: (waitedMs) => {
        metrics.claimed(waitedMs);
        desktop.routes?.onClaimed?.(waitedMs);
      },
    },
    ...(desktop.target ? { target: desktop.target } : {}),
    sweeper: {
      ...options.sweeper,
      onSweep: (moved) => {
        metrics.swept(moved);
        onSweep?.(moved);
      },
    },
    logger,
  });
}

/**
 * The cloud target, with session credentials, and each turn's end (or ask) recorded in the ledger
 * with no read; a turn whose spend reached a budget is stopped through the target itself.
 */
function cloudTargetOf({ options, logger, credentials }: HostParts): CloudTarget | null {
  if (!options.cloud) return null;
  const stopPaused: OnPaused = (call, session) => target.stop(call, session);
  const target = createCloudTarget({
    onObserved: recordObservedStates(createSessionLedger(options.sql), logger, stopPaused),
    ...options.cloud,
    ...(credentials ? { sessionMcp: (subject) => credentials.issue(subject) } : {}),
    logger,
  });
  return target;
}

/** Push, with the member limits: new MCP sessions per member through the shared gate. */
function sessionPushOf(
  { options, logger, schema, memberLimits, gate }: HostParts,
  channel: DesktopChannel,
  capability: RemoteSessionSource,
): SessionPush | null {
  if (options.push === false) return null;
  return createSessionPush({
    ...options.push,
    sql: options.sql,
    hub: channel.hub,
    source: capability,
    logger,
    schema,
    limits: memberLimits,
    admitOpen: (auth) => gate.take(`mcp-open\u0000${mcpMemberKey(auth)}`, memberLimits.mcpSessionOpens),
  });
}
