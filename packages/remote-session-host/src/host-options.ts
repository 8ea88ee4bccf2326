import type { CloudTargetOptions } from "@openwork/cloud-target";
import type {
  DesktopChannel,
  Dialect,
  DesktopTargetOptions,
  DesktopTimings,
  HostWorkKind,
  RunnerRoutesOptions,
  StreamLimits,
  SweeperOptions,
  WakeBus,
  WakeHub,
} from "@openwork/desktop-target";
import type { BuiltinSkillSource, RemoteSessionSource, RemoteSessionSourceOptions } from "@openwork/mcp-capability";
import type { Logger, MemberScope, Target } from "@openwork/remote-session-core";
import type { AnswerLinks, NotificationDrain } from "@openwork/session-notify";
import type { NotificationStats } from "@openwork/session-notify/internal";
import type { SessionPush, SessionPushOptions } from "@openwork/session-push";
import type { Hono, MiddlewareHandler } from "hono";
import type { Sql } from "postgres";
import type { McpAuth } from "./mcp-auth.js";
import type { HostTelemetry } from "./telemetry.js";
import type { McpRoutesOptions } from "./mcp-routes.js";
import type { MemberLimits } from "./member-limits.js";
import type { ProcessLimits } from "./process-limits.js";
import type { HostNotifyOptions, NotifyParts } from "./notifications.js";
import type { SessionCredentialAuth } from "./session-credential-auth.js";

/** The desktop side: the runner channel desktops open (claim, lease, heartbeat, events, complete). */
export interface HostDesktopOptions {
  /** HMAC secret of runner tokens (at least 32 bytes): the same on every replica. Session credentials and answer links derive their keys from it. */
  secret: string;
  /** The signed-in member of a request to the member routes (minting a runner token, presence, notification channels), or null. */
  authenticateMember(request: Request): Promise<MemberScope | null>;
  /**
   * The runner channels the host knows, as values, the default (what names none) first. Default
   * `builtInDialects()`: ours and OpenWork's. A third is a `Dialect` of the host's own.
   */
  dialects?: readonly Dialect[];
  /** The rest of the runner routes' options (the dialects served, by name; OpenWork base paths, proxy trust…). */
  routes?: Omit<
    RunnerRoutesOptions,
    | "sql"
    | "hub"
    | "secret"
    | "baseUrl"
    | "authenticateMember"
    | "isActiveMember"
    | "mayUseModel"
    | "logger"
    | "timings"
    | "sessionMcp"
    | "dialectSet"
    | "tracerProvider"
    | "workKinds"
  >;
  /**
   * Work kinds of the host's own (an Automation run…) on the same runner channel, token and wake
   * stream as the remote sessions, each in its own table (protocol 4). Default: none.
   */
  workKinds?: readonly HostWorkKind[];
  /**
   * Every timing of the desktop channel (presence window, lease, heartbeat, keepalive, claim
   * deadline, relay wait, sweep interval); the rest are `DEFAULT_DESKTOP_TIMINGS`'. One value
   * reaches the target, the runner routes and the sweeper alike.
   */
  timings?: Partial<DesktopTimings>;
  /** Middleware run before every runner request under a prefix, after the host's own stream gate. */
  routeMiddleware?: readonly MiddlewareHandler[];
  /** The desktop target's own options (web links). */
  target?: Omit<DesktopTargetOptions, "sql" | "hub" | "logger" | "timings">;
  /** Open runner streams one process keeps per runner and per member. */
  streamLimits?: Partial<StreamLimits>;
}

/**
 * Session credentials: the engine of every remote session gets an MCP entry for the host's MCP
 * endpoint with a credential of its own, so what it creates there is that session's child
 * (spawn rules apply). Without this option engines get no such entry.
 */
export interface HostSessionCredentialOptions {
  /** The host's MCP endpoint, as engines reach it: the credentials' audience. */
  mcpUrl: string;
  /** The MCP scopes the member holds now: a session credential never carries more (a read-only member's engine only reads). */
  scopesOf(scope: MemberScope): Promise<readonly string[]>;
  /** How long an issued credential lives. Default the credentials' own (24 h). */
  ttlMs?: number;
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
  /** The gateway's public base URL: the audience of the runner tokens it mints, the origin of answer links. */
  baseUrl: string;
  desktop: HostDesktopOptions;
  /** The cloud worker (its resolver and whether an organization may use it); without it, desktops only. */
  cloud?: Omit<CloudTargetOptions, "logger" | "sessionMcp">;
  /** Whether the member is still an active member; asked on every runner request, session credential and member route. */
  isActiveMember(scope: MemberScope): Promise<boolean>;
  /** Whether the member may still use a task's model; asked when a desktop claims it. Default: yes. */
  mayUseModel?: RunnerRoutesOptions["mayUseModel"];
  /**
   * The host's own MCP bearer-token check (OAuth introspection, its API keys): what
   * `verifyMcpToken` asks for a token that is not a session credential. Default: none is valid.
   */
  verifyMemberToken?(token: string): Promise<McpAuth | null>;
  /** Session credentials for engines (spawned sessions); off when not given. */
  sessionCredentials?: HostSessionCredentialOptions;
  /**
   * The audit of every create, send, respond and stop (never prompt text): a function told each
   * outcome, or an `AuditLog` whose `begin` may refuse the call before it runs (`audit_unavailable`).
   */
  audit?: RemoteSessionSourceOptions["audit"];
  /** How long an `AuditLog`'s `begin` may take before the call is refused. Default 5 s. */
  auditTimeoutMs?: number;
  /** More targets, offered after the cloud and the desktop (a third team's). */
  targets?: readonly Target[];
  /** The target of a create that names none. Default `cloud` when configured, else `desktop`. */
  defaultTarget?: string;
  /** Limits and policy of the capability (rate limits, spawn rules, budget defaults and ceilings, the input timeout). */
  limits?: Pick<RemoteSessionSourceOptions, "createRateLimit" | "sendRateLimit" | "inputTimeoutMs" | "policy" | "spawnRules" | "budgetRules">;
  /** What one member may hold or start on one process (waiting reads, MCP requests, push streams, runner streams). */
  memberLimits?: Partial<MemberLimits>;
  /**
   * What this process holds and opens for every member together: its wake-stream budget (apart
   * from requests) and the rate it opens streams at. Default `defaultProcessLimits()`: streams
   * sized by the heap, 200 opens a second.
   */
  processLimits?: Partial<ProcessLimits>;
  /** Push (MCP resource subscriptions); `false` for none. Default on. */
  push?: false | Omit<SessionPushOptions, "sql" | "hub" | "source" | "logger" | "schema" | "limits" | "admitOpen">;
  /** Notifications to members (webhooks, email, the host's own kinds) and their answer links; off when not given. */
  notifications?: HostNotifyOptions;
  /** The sweeper's options (retention, metrics); its interval is `desktop.timings.sweepIntervalMs`. */
  sweeper?: Omit<SweeperOptions, "sql" | "publisher" | "logger" | "timings">;
  /**
   * Where the host's metrics and traces go: OpenTelemetry providers. Default the global ones
   * (`@opentelemetry/api`), which do nothing until the host installs an SDK.
   */
  telemetry?: HostTelemetry;
  logger?: Logger;
}

/** Notifications as a host mounts them. */
export interface HostNotifications {
  /** The member's channels (`GET/POST /channels`, `PATCH/DELETE /channels/:id`), for session-token callers only: `app.route("/member/notify", …)`. */
  readonly memberRoutes: Hono;
  /** The answer page of notification links: `app.route(host.notifications.answerPath, …)`; null when `answerPage: false`. */
  readonly answerPage: Hono | null;
  /** Where answer links point, under `baseUrl` (`/notify/answer`). */
  readonly answerPath: string;
  /** The channels and the kinds a member may create here. */
  readonly channels: NotifyParts["channels"];
  readonly kinds: ReadonlySet<string>;
  readonly links: AnswerLinks;
  /** The outbox drain, once `start()` has run. */
  drain(): NotificationDrain | null;
  /** The outbox by status (every organization's). */
  stats(): Promise<NotificationStats>;
}

/** Runs one MCP request of a verified caller through the member's gates (in-flight cap, body limit). */
export type McpGate = (request: Request, auth: McpAuth, serve: (request: Request) => Promise<Response>) => Promise<Response>;

/** What a host mounts. Call `start()` once before serving, `close()` when shutting down. */
export interface RemoteSessionHost {
  /** The capability source (den-api: the `remoteSession` slot of its registry). With push on, it publishes changes. */
  readonly source: RemoteSessionSource;
  /** The built-in skill source (den-api: the `builtinSkill` slot), with the remote-sessions skill. */
  readonly skills: BuiltinSkillSource;
  /** The desktop runner routes, behind the per-token and per-member stream gate: `app.route("/", host.runnerRoutes)`. */
  readonly runnerRoutes: Hono;
  /** The path prefixes those routes serve. */
  readonly runnerPrefixes: readonly string[];
  /** Push, for the host's MCP endpoint (`registerResources`, `endpoint`); null when off. */
  readonly push: SessionPush | null;
  /** Notifications' routes and drain; null when off. */
  readonly notifications: HostNotifications | null;
  /** Session credentials (issue, verify); null when off. */
  readonly sessionCredentials: SessionCredentialAuth | null;
  /**
   * The MCP auth hook: a session credential is decided by its own verifier only (a forged one
   * never reaches the host's), anything else by `verifyMemberToken`.
   */
  verifyMcpToken(token: string): Promise<McpAuth | null>;
  /** The per-member gate around the host's MCP endpoint. */
  readonly mcpGate: McpGate;
  /**
   * The host's MCP endpoint at `path` behind the auth hook and the gate, with its
   * protected-resource metadata: `app.route("/", host.mcpRoutes({ path, endpoint }))`.
   */
  mcpRoutes(options: McpRoutesOptions): Hono;
  /** This process's wake hub (streams, waiters, the bus): `desktop.hub`. */
  readonly hub: WakeHub;
  /** The desktop channel: its hub, publisher, target, runner routes, sweeper and resolved timings. */
  readonly desktop: DesktopChannel;
  /** Migrates (into `schema`), waits for the bus, starts push, the notification drain and the sweeper. */
  start(): Promise<void>;
  /** Stops the sweeper, push, the drain, the cloud's event streams and the hub (and its bus). `sql` is the host's. */
  close(): Promise<void>;
}
