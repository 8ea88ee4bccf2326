import { type CloudTarget, type CloudTargetOptions, createCloudTarget } from "@openwork/cloud-target";
import {
  createDesktopChannel,
  type DesktopChannel,
  type DesktopTargetOptions,
  type DesktopTimings,
  migrateDesktopTarget,
  type RunnerRoutesOptions,
  type StreamLimits,
  type SweeperOptions,
  type WakeBus,
  type WakeHub,
} from "@openwork/desktop-target";
import {
  type BuiltinSkillSource,
  createBuiltinSkillSource,
  createRemoteSessionSource,
  type RemoteSessionSource,
  type RemoteSessionSourceOptions,
} from "@openwork/mcp-capability";
import { createSessionLedger, DEFAULT_SCHEMA, type Logger, type MemberScope, silentLogger, type Target } from "@openwork/remote-session-core";
import { createSessionPush, type SessionPush, type SessionPushOptions } from "@openwork/session-push";
import type { Hono, MiddlewareHandler } from "hono";
import type { Sql } from "postgres";
import { runnerApp } from "./runner-app.js";

/** The desktop side: the runner channel desktops open (claim, lease, heartbeat, events, complete). */
export interface HostDesktopOptions {
  /** HMAC secret of runner tokens (at least 32 bytes): the same on every replica. */
  secret: string;
  /** The signed-in member of a request to the member routes (minting a runner token, presence), or null. */
  authenticateMember(request: Request): Promise<MemberScope | null>;
  /** The rest of the runner routes' options (dialects, OpenWork base paths, proxy trust…). */
  routes?: Omit<RunnerRoutesOptions, "sql" | "hub" | "secret" | "baseUrl" | "authenticateMember" | "isActiveMember" | "mayUseModel" | "logger" | "timings">;
  /**
   * Every timing of the desktop channel (presence window, lease, heartbeat, keepalive, claim
   * deadline, relay wait, sweep interval); the rest are `DEFAULT_DESKTOP_TIMINGS`'. One value
   * reaches the target, the runner routes and the sweeper alike.
   */
  timings?: Partial<DesktopTimings>;
  /** Middleware run before every runner request under a prefix (e.g. a per-member stream gate). */
  routeMiddleware?: readonly MiddlewareHandler[];
  /** The desktop target's own options (web links). */
  target?: Omit<DesktopTargetOptions, "sql" | "hub" | "logger" | "timings">;
  /** Open runner streams one process keeps per runner and per member. */
  streamLimits?: Partial<StreamLimits>;
}

export interface RemoteSessionHostOptions {
  /**
   * The host's PostgreSQL handle, resolving names in `schema`:
   * `postgres(url, { connection: { search_path: schema } })`. `start()` refuses one that does not.
   */
  sql: Sql;
  /** The schema of the tables. Default `openwork_remote_sessions`. */
  schema?: string;
  /** A direct connection for the default bus's LISTEN (never a transaction pooler). Default `sql`. */
  listenSql?: Sql;
  /** The bus hints travel on between replicas (e.g. NATS). Default PostgreSQL LISTEN/NOTIFY. Closed by `close()`. */
  bus?: WakeBus;
  /** The gateway's public base URL: the audience of the runner tokens it mints. */
  baseUrl: string;
  desktop: HostDesktopOptions;
  /** The cloud worker (its resolver and whether an organization may use it); without it, desktops only. */
  cloud?: Omit<CloudTargetOptions, "logger">;
  /** Whether the member is still an active member; asked on every runner request. */
  isActiveMember(scope: MemberScope): Promise<boolean>;
  /** Whether the member may still use a task's model; asked when a desktop claims it. Default: yes. */
  mayUseModel?: RunnerRoutesOptions["mayUseModel"];
  /** Told of every create, send, respond and stop with its outcome (never prompt text). */
  audit?: RemoteSessionSourceOptions["audit"];
  /** More targets, offered after the cloud and the desktop (a third team's). */
  targets?: readonly Target[];
  /** The target of a create that names none. Default `cloud` when configured, else `desktop`. */
  defaultTarget?: string;
  /** Limits and policy of the capability (rate limits, waiting reads, the input timeout). */
  limits?: Pick<RemoteSessionSourceOptions, "createRateLimit" | "sendRateLimit" | "inputTimeoutMs" | "waitingReadsPerMember" | "policy">;
  /** Push (MCP resource subscriptions); `false` for none. Default on. */
  push?: false | Omit<SessionPushOptions, "sql" | "hub" | "source" | "logger" | "schema">;
  /** The sweeper's options (retention, metrics); its interval is `desktop.timings.sweepIntervalMs`. */
  sweeper?: Omit<SweeperOptions, "sql" | "publisher" | "logger" | "timings">;
  logger?: Logger;
}

/** What a host mounts. Call `start()` once before serving, `close()` when shutting down. */
export interface RemoteSessionHost {
  /** The capability source (den-api: the `remoteSession` slot of its registry). */
  readonly source: RemoteSessionSource;
  /** The built-in skill source (den-api: the `builtinSkill` slot), with the remote-sessions skill. */
  readonly skills: BuiltinSkillSource;
  /** The desktop runner routes: `app.route("/", host.runnerRoutes)`. */
  readonly runnerRoutes: Hono;
  /** The path prefixes those routes serve. */
  readonly runnerPrefixes: readonly string[];
  /** Push, for the host's MCP endpoint (`registerResources`, `endpoint`); null when off. */
  readonly push: SessionPush | null;
  /** This process's wake hub (streams, waiters, the bus): `desktop.hub`. */
  readonly hub: WakeHub;
  /** The desktop channel: its hub, publisher, target, runner routes, sweeper and resolved timings. */
  readonly desktop: DesktopChannel;
  /** Migrates (into `schema`), waits for the bus, starts push and the sweeper. */
  start(): Promise<void>;
  /** Stops the sweeper, push, the cloud's event streams and the hub (and its bus). `sql` is the host's. */
  close(): Promise<void>;
}

/**
 * Remote sessions composed for a host: both targets over one database and one desktop channel
 * (its wake hub, runner routes and sweeper, with one set of timings), the capability source, the
 * skill and push. The capability still knows no target; this package is where they meet.
 */
export function createRemoteSessionHost(options: RemoteSessionHostOptions): RemoteSessionHost {
  const logger = options.logger ?? silentLogger;
  const { sql, desktop } = options;
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const channel = createDesktopChannel({
    sql,
    ...(options.bus ? { bus: options.bus } : {}),
    ...(options.listenSql ? { listen: options.listenSql } : {}),
    ...(desktop.timings ? { timings: desktop.timings } : {}),
    ...(desktop.streamLimits ? { streamLimits: desktop.streamLimits } : {}),
    routes: {
      ...desktop.routes,
      secret: desktop.secret,
      baseUrl: options.baseUrl,
      authenticateMember: desktop.authenticateMember,
      isActiveMember: options.isActiveMember,
      ...(options.mayUseModel ? { mayUseModel: options.mayUseModel } : {}),
    },
    ...(desktop.target ? { target: desktop.target } : {}),
    ...(options.sweeper ? { sweeper: options.sweeper } : {}),
    logger,
  });
  const { hub, routes } = channel;
  const cloud: CloudTarget | null = options.cloud ? createCloudTarget({ ...options.cloud, logger }) : null;
  const targets = [...(cloud ? [cloud] : []), channel.target, ...(options.targets ?? [])];
  const capability = createRemoteSessionSource({
    ...options.limits,
    targets,
    defaultTarget: options.defaultTarget ?? (cloud ? "cloud" : "desktop"),
    ledger: createSessionLedger(sql),
    logger,
    ...(options.audit ? { audit: options.audit } : {}),
  });
  const push = options.push === false ? null : createSessionPush({ ...options.push, sql, hub, source: capability, logger, schema });
  let closing: Promise<void> | null = null;

  return {
    source: push?.source ?? capability,
    skills: createBuiltinSkillSource(),
    runnerRoutes: runnerApp(routes, logger, desktop.routeMiddleware),
    runnerPrefixes: routes.prefixes,
    push,
    hub,
    desktop: channel,
    start: async () => {
      await migrateDesktopTarget(sql, { schema });
      await channel.ready;
      await push?.start();
      await channel.start();
    },
    close: () =>
      (closing ??= (async () => {
        await push?.close();
        cloud?.close();
        await channel.close();
      })()),
  };
}
