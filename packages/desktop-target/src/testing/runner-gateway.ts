import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createSessionLedger, type Logger, type MemberScope, newReferenceId, type Target, type TargetCall } from "@openwork/remote-session-core";
import { type TargetSessions, targetSessions } from "@openwork/remote-session-core/testing";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { requestRunnerToken } from "@openwork/runner-protocol/client";
import postgres, { type Sql } from "postgres";
import { createDesktopChannel, type DesktopChannel, type DesktopChannelOptions } from "../desktop-channel.js";
import type { DesktopTimings } from "../desktop-timings.js";
import { migrateDesktopTarget } from "../migrate-desktop-target.js";
import type { RunnerRoutes } from "../routes/create-runner-routes.js";
import type { RunnerRoutesOptions } from "../routes/route-context.js";
import type { DialectSet } from "../dialects/dialect-set.js";
import type { TransactionScope } from "../store/transaction.js";
import type { WakeBus } from "../wake/wake-bus.js";
import type { WakeHub } from "../wake/wake-hub.js";

export const SECRET = "desktop-target-test-secret-0123456789";

/** Every log line the gateway wrote, as text, so tests can assert what never appears. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { lines, info: write("info"), warn: write("warn"), error: write("error") };
}

/**
 * One gateway replica for tests: its own postgres.js client (so its own LISTEN connection) and its
 * desktop channel (the wake hub, the runner routes served over real HTTP on 127.0.0.1, the
 * desktop Target), with short timings. Its sweeper is off unless asked for (`sweeper`): tests sweep when they mean to.
 */
export interface RunnerGateway {
  /** The public base URL: the runner-token audience. */
  baseUrl: string;
  /** Where this replica actually listens (differs from baseUrl behind a proxy). */
  serverUrl: string;
  sql: Sql;
  /** The replica's desktop channel (its hub, routes and target are the fields below). */
  channel: DesktopChannel;
  hub: WakeHub;
  /** The replica's database handle with its hub's publisher: what `transaction()` and a sweep take. */
  store: TransactionScope & { readonly dialects: DialectSet };
  routes: RunnerRoutes;
  target: Target;
  /** The desktop target driven as the capability drives it: through the core, which records the session rows. */
  sessions: TargetSessions;
  logger: ReturnType<typeof capturingLogger>;
  /**
   * Answers a request in process, through `routes.fetch` (no socket): what the served routes
   * answer for `serverUrl` + `path`, for tests where the socket is not the point.
   */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** A member's session token for the member routes (token, presence). */
  memberToken(scope: MemberScope): string;
  /** Registers a runner for the member through `POST token` and returns its runner token. */
  registerRunner(scope: MemberScope, runnerId: string, options?: { name?: string; capabilities?: string[]; protocolVersion?: number }): Promise<string>;
  /** A Target call for the member; its user id is `userId`, else derived from the member id. */
  call(scope: MemberScope & { userId?: string }): TargetCall;
  /** Removes the member: their runner tokens stop working. */
  removeMember(scope: MemberScope): void;
  close(): Promise<void>;
}

export async function startRunnerGateway(
  databaseUrl: string,
  overrides: Partial<Omit<RunnerRoutesOptions, "timings">> & {
    timings?: Partial<DesktopTimings>;
    sweeper?: DesktopChannelOptions["sweeper"];
    baseUrl?: string;
    sessionRunnerTargets?: () => Promise<boolean>;
    /** Told of every statement the replica's pool sends (postgres.js `debug`). */
    onStatement?: (statement: string) => void;
    /** The replica's wake bus, built on its pool. Default PostgreSQL LISTEN/NOTIFY. */
    bus?: (sql: Sql) => WakeBus;
  } = {},
): Promise<RunnerGateway> {
  const { timings, sweeper = false, onStatement, bus, workKinds, ...routeOverrides } = overrides;
  const sql = postgres(databaseUrl, { max: 10, onnotice: () => {}, ...(onStatement ? { debug: (_connection, statement) => onStatement(statement) } : {}) });
  await migrateDesktopTarget(sql);
  const logger = capturingLogger();
  const removed = new Set<string>();
  const key = (scope: MemberScope) => `${scope.organizationId}/${scope.memberId}`;
  const memberToken = (scope: MemberScope) => `member:${scope.organizationId}:${scope.memberId}`;

  let routes: RunnerRoutes | undefined;
  const server = serve({ fetch: (request: Request) => routes!.fetch(request), port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const baseUrl = overrides.baseUrl ?? serverUrl;
  const channel = createDesktopChannel({
    sql,
    ...(bus ? { bus: bus(sql) } : {}),
    timings: { leaseMs: 3_000, heartbeatIntervalMs: 200, keepaliveMs: 1_000, membershipCheckMs: 200, ...timings },
    routes: {
      secret: SECRET,
      baseUrl,
      authenticateMember: async (request) => {
        const [kind, organizationId, memberId] = (request.headers.get("authorization") ?? "").replace(/^Bearer /, "").split(":");
        return kind === "member" && organizationId && memberId ? { organizationId, memberId } : null;
      },
      isActiveMember: async (scope) => !removed.has(key(scope)),
      ...routeOverrides,
    },
    sweeper,
    ...(workKinds ? { workKinds } : {}),
    logger,
  });
  await channel.start();
  const { hub, target } = channel;
  routes = channel.routes;

  const sessions = targetSessions(target, createSessionLedger(sql), logger);

  return {
    baseUrl,
    serverUrl,
    sql,
    channel,
    hub,
    store: channel.store,
    routes,
    target,
    sessions,
    logger,
    memberToken,
    request: (path, init) => routes!.fetch(new Request(`${serverUrl}${path}`, init)),
    registerRunner: async (scope, runnerId, options = {}) => {
      const minted = await requestRunnerToken({
        baseUrl,
        memberToken: memberToken(scope),
        request: {
          runnerId,
          name: options.name ?? `Desktop ${runnerId}`,
          platform: "linux",
          appVersion: "1.0.0",
          protocolVersion: options.protocolVersion ?? RUNNER_PROTOCOL_VERSION,
          capabilities: options.capabilities ?? ["session_create_v1", "session_followup_v1", "model_variant_v1"],
        },
      });
      return minted.token;
    },
    call: (scope) => ({ userId: `user_of_${scope.memberId}`, ...scope, referenceId: newReferenceId() }),
    removeMember: (scope) => void removed.add(key(scope)),
    close: async () => {
      (server as import("node:http").Server).closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await channel.close();
      await sql.end({ timeout: 5 });
    },
  };
}
