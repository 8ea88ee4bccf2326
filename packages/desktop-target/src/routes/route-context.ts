import type { TracerProvider, Tracer } from "@opentelemetry/api";
import type { Logger, MemberScope, Model } from "@openwork/remote-session-core";
import type { RunnerTokenSecret } from "@openwork/runner-protocol/server";
import type { Sql } from "postgres";
import type { DesktopTimings } from "../desktop-timings.js";
import type { DialectSet } from "../dialects/dialect-set.js";
import type { RunnerDialect } from "../store/runner-row.js";
import type { HintPublisher } from "../wake/hints.js";
import type { WakeHub } from "../wake/wake-hub.js";
import type { RegistrationCache } from "./registration-cache.js";
import type { StreamPresence } from "./stream-presence.js";
import type { StreamMembership } from "./stream-membership.js";
import type { VerifiedTokens } from "./verified-tokens.js";
import type { ProxyTrust } from "./entry-point.js";
import type { HostWorkKind, HostWorkKinds } from "../host-work-kind.js";
import type { OpenworkRuns } from "../dialects/openwork/openwork-runs.js";
import type { IssueSessionMcp } from "./session-mcp.js";

/** What the host gives the runner routes. */
export interface RunnerRoutesOptions {
  sql: Sql;
  hub: WakeHub;
  /** HMAC secret of runner tokens (≥ 32 bytes). */
  secret: RunnerTokenSecret;
  /** The gateway's public base URL: the audience of the tokens our protocol's mint hands out. */
  baseUrl: string;
  /**
   * Other entry points of this gateway whose tokens our protocol accepts (e.g. behind a proxy at
   * `https://app.example.com/api/den`). A mint through one of them names it as audience.
   */
  audiences?: string[];
  /** Proxies whose forwarded headers are believed when deriving an entry point. Default: none, prefix `/api/den`. */
  proxyTrust?: ProxyTrust;
  /**
   * The runner channels to serve: our protocol (`desktop-runner`, under `/v1/desktop-runner`) and
   * OpenWork's (`openwork`: `/v1/automation-runners/*`, `/v1/automation-runner/*`,
   * `/v1/automation-runs/*`, `/v1/remote-session-commands/*`, `/v1/remote-session-requests/*`,
   * `/v1/session-runners/*`), for OpenWork desktops already installed. Default: ours only, so a
   * host that serves OpenWork's paths itself is never shadowed. Names of `dialectSet`'s dialects.
   */
  dialects?: readonly RunnerDialect[];
  /**
   * Every dialect the channel knows (its runners, tasks and sessions), as values: the built-in
   * ones (`builtInDialects()`) by default. A desktop channel hands its own set to the target, the
   * routes and the sweeper alike.
   */
  dialectSet?: DialectSet;
  /** Where the routes' spans go. Default the global provider of `@opentelemetry/api` (nothing until an SDK is installed). */
  tracerProvider?: TracerProvider;
  /**
   * The base paths OpenWork's channel is served under, each with all its route families (an
   * unknown route in them is OpenWork's JSON 404, never the host's). Default `["", "/api/den"]`:
   * at the root, and where OpenWork's desktops look (`<origin>/api/den`). A mint's audience keeps
   * the base path it came through.
   */
  openworkBasePaths?: readonly string[];
  /** Route prefix of our protocol. Default `/v1/desktop-runner`. */
  prefix?: string;
  /** The signed-in member of a request to the member routes (token, presence), or null. */
  authenticateMember(request: Request): Promise<MemberScope | null>;
  /**
   * Whether the member is still active; asked on every runner request, and for open streams once
   * per member every `membershipCheckMs` (15 s) whatever its number of desktops: a removed member's
   * streams end within that.
   */
  isActiveMember(scope: MemberScope): Promise<boolean>;
  /** Whether the member may still use a task's model; asked at claim. Default: yes. */
  mayUseModel?(scope: MemberScope, model: Model): Promise<boolean>;
  /**
   * Issues the MCP entry of a turn's engine (the gateway's MCP URL and the session's own
   * credential), handed over with the turn's assignment and again when a heartbeat asks: what the
   * session's agent creates through it is recorded as spawned by the session. Default: none.
   */
  sessionMcp?: IssueSessionMcp;
  /** What one task's events may take (JSON bytes, every attempt together). Default 4 MiB. */
  turnEventBytes?: number;
  /**
   * The channel's timings the routes use: the presence window, the lease, the heartbeat interval
   * the runner is told, the stream's keepalive and membership re-check, how long a registration is
   * served from memory (`registrationCacheMs`, ≤ 1 s). Default:
   * `DEFAULT_DESKTOP_TIMINGS`; `createDesktopChannel` passes the ones it resolved.
   */
  timings?: Partial<RouteTimings>;
  /** Told of each first claim: how long the task waited for a runner (a dispatch-latency metric). */
  onClaimed?(waitedMs: number): void;
  /**
   * Work kinds of the host's own (an Automation run…) served on our protocol's channel beside the
   * remote-session kinds (protocol 4), each with its own table and lifecycle. Default: none.
   */
  workKinds?: readonly HostWorkKind[];
  /**
   * The host's Automation runs for OpenWork desktops, when `dialects` serves OpenWork's paths: listed
   * in their work, `/v1/automation-runs/*` answered by the host, and woken for. Default: none (those
   * desktops are told no run is claimable).
   */
  openworkRuns?: OpenworkRuns;
  logger?: Logger;
}

/** The timings the runner routes use. */
export type RouteTimings = Pick<
  DesktopTimings,
  "presenceWindowMs" | "leaseMs" | "heartbeatIntervalMs" | "keepaliveMs" | "presenceFlushMs" | "membershipCheckMs" | "registrationCacheMs"
>;

export type RouteContext = Required<
  Omit<
    RunnerRoutesOptions,
    | "mayUseModel"
    | "prefix"
    | "dialects"
    | "dialectSet"
    | "tracerProvider"
    | "onClaimed"
    | "openworkBasePaths"
    | "timings"
    | "sessionMcp"
    | "workKinds"
    | "openworkRuns"
  >
> &
  Pick<RunnerRoutesOptions, "mayUseModel" | "onClaimed" | "sessionMcp" | "openworkRuns"> &
  RouteTimings & {
    /** The dialects the channel knows: what a runner's, task's or session's dialect name means. */
    dialects: DialectSet;
    /** The host's own work kinds, by name and by task id. */
    workKinds: HostWorkKinds;
    /** Spans of claims and of runners' posts, in the trace of the call that queued the task. */
    tracer: Tracer;
    /** The hub's publisher: the routes' transactions send their hints through it. */
    publisher: HintPublisher;
    /** The registrations these routes read lately (this channel's only, `registrationCacheMs`), forgotten on revoke hints. */
    registrations: RegistrationCache;
    /** The presence of the desktops whose wake streams this process holds (this channel's only), written in batches. */
    presence: StreamPresence;
    /** The open streams' membership re-check: one timer for the process, each member asked once per `membershipCheckMs`. */
    streamMembership: StreamMembership;
    /** The runner tokens these routes accepted lately (this channel's only), re-checked for expiry at every use. */
    tokens: VerifiedTokens;
  };
