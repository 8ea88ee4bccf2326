#!/usr/bin/env node
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { startEmbeddedPostgres } from "@openwork/embedded-postgres";
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { startWitnessWorker } from "@openwork/witness-worker";
import postgres from "postgres";
import { z } from "zod";
import { connectCommands } from "./connect-commands.js";
import { budgetRulesOf, loadDevConfig } from "./dev-members.js";
import { consoleTraces } from "./console-traces.js";
import { smtpFromUrl } from "./smtp-url.js";
import { serveGateway } from "./serve-gateway.js";
import { explainDatabaseError, StartupError } from "./startup-errors.js";

// The only place that reads the environment.
const env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8787),
    HOST: z.string().default("127.0.0.1"),
    PUBLIC_URL: z.url().optional(),
    /** Comma-separated browser origins allowed besides the gateway's own (DNS-rebinding protection). */
    ALLOWED_ORIGINS: z.string().optional(),
    /** Comma-separated base paths OpenWork's runner channel is served under (default: the root and /api/den; "/" for the root). */
    OPENWORK_BASE_PATHS: z.string().optional(),
    /** Comma-separated public origins of proxies whose X-Forwarded-* headers are believed (a mint through one gets the audience <origin>/api/den). */
    TRUSTED_PROXY_ORIGINS: z.string().optional(),
    DATABASE_URL: z.string().optional(),
    /** A direct connection for the wake hub's LISTEN when DATABASE_URL goes through a pooler. */
    LISTEN_DATABASE_URL: z.string().optional(),
    /** NATS servers (comma-separated) for wake-up hints between gateway processes, instead of PostgreSQL's NOTIFY. */
    NATS_URL: z.string().optional(),
    DEV_CONFIG: z.string().default(".openwork-dev/gateway.json"),
    CLOUD_RESOLVER_URL: z.url().optional(),
    CLOUD_GATEWAY_KEY: z.string().optional(),
    WITNESS_OPENCODE_URL: z.url().optional(),
    WEB_URL_TEMPLATE: z.string().default("https://app.openwork.dev/w/{workspaceId}/session/{sessionId}"),
    START_RUNNER: z.enum(["0", "1"]).default("1"),
    ECHO_TARGET: z.enum(["0", "1"]).default("0"),
    TRACES: z.enum(["off", "console"]).default("off"),
    CREATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(32),
    /** Request connections (MCP calls, runner requests, pages) the process holds; default sized by its file limit (256–4 096). */
    MAX_CONNECTIONS: z.coerce.number().int().min(16).optional(),
    /** Runner wake streams the process holds, apart from requests; default sized by its file and heap limits. */
    MAX_RUNNER_STREAMS: z.coerce.number().int().min(1).optional(),
    /** Wake streams the process opens a second (a fleet reconnecting is spread to it); default 200. */
    RUNNER_STREAM_OPENS_PER_SECOND: z.coerce.number().int().min(1).optional(),
    /** Where notification mail is handed over (smtp://user:pass@host:587, smtps://…:465); without it members cannot create email channels. */
    SMTP_URL: z.string().optional(),
    /** The From of notification mail, e.g. "OpenWork <notify@example.com>"; required with SMTP_URL. */
    NOTIFY_FROM: z.string().optional(),
    /** How often each replica looks at the notification outbox, in ms (default 1 000). */
    NOTIFY_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).optional(),
    /** A notification send is aborted after this many ms (default 10 000); another replica may resend after twice this. */
    NOTIFY_SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).optional(),
    /** "1": webhooks may target loopback and private addresses (a single machine, tests). Default "0". */
    NOTIFY_ALLOW_PRIVATE_NETWORKS: z.enum(["0", "1"]).default("0"),
    /** "0": only the interval wakes the notification drain, not session hints on the wake bus. Default "1". */
    NOTIFY_WAKE_ON_HINTS: z.enum(["0", "1"]).default("1"),
  })
  .parse(process.env);

const say = (line: string) => process.stdout.write(`${line}\n`);
// Everything started is stopped in reverse order, on Ctrl-C and on a failed start alike.
const stops: (() => Promise<unknown> | unknown)[] = [];
let stopping = false;
const shutdown = async (code: number) => {
  if (stopping) return;
  stopping = true;
  say("› stopping…");
  for (const stop of stops) await Promise.resolve(stop()).catch(() => {});
  process.exit(code);
};
process.once("SIGINT", () => void shutdown(0));
process.once("SIGTERM", () => void shutdown(0));

async function start(): Promise<void> {
  const notify = notifySettings();
  const config = await loadDevConfig(env.DEV_CONFIG);
  const { sql, listenSql } = await openDatabase();
  // The gateway closes the bus with itself.
  const wakeBus = env.NATS_URL
    ? await connectNatsWakeBus({ servers: env.NATS_URL.split(",").map((s) => s.trim()) }).catch((error: unknown) => {
        throw new StartupError(`NATS_URL: ${error instanceof Error ? error.message : String(error)}`);
      })
    : undefined;
  const cloud = await cloudWorker(config);
  const traces = env.TRACES === "console" ? consoleTraces() : null;
  if (traces) stops.push(() => traces.close());
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    process.stdout.write(`[gateway] ${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`);
  const gateway = await serveGateway({
    sql,
    ...(listenSql ? { listenSql } : {}),
    ...(wakeBus ? { wakeBus } : {}),
    ...servedAt(),
    members: () => config.members,
    cloudEnabled: (organizationId) => config.cloudOrganizations.includes(organizationId),
    runnerTokenSecret: config.runnerTokenSecret,
    // den-api authenticates the member from the request: the member's own session token.
    cloudResolver: createHttpWorkerResolver({
      baseUrl: cloud.resolverUrl,
      gatewayKey: cloud.gatewayKey,
      memberHeaders: (scope): Record<string, string> => {
        const m = config.members.find((member) => member.organizationId === scope.organizationId && member.memberId === scope.memberId);
        return m ? { authorization: `Bearer ${m.sessionToken}` } : {};
      },
    }),
    webUrlTemplate: env.WEB_URL_TEMPLATE,
    createRateLimit: { bucket: "create", limit: env.CREATE_RATE_LIMIT_PER_MINUTE, windowMs: 60_000 },
    budgetRules: budgetRulesOf(config),
    echoTarget: env.ECHO_TARGET === "1",
    connectionLimits: {
      ...(env.MAX_CONNECTIONS ? { maxConnections: env.MAX_CONNECTIONS } : {}),
      ...(env.MAX_RUNNER_STREAMS ? { maxStreams: env.MAX_RUNNER_STREAMS } : {}),
    },
    ...(env.RUNNER_STREAM_OPENS_PER_SECOND
      ? { processLimits: { runnerStreamOpens: { burst: 2 * env.RUNNER_STREAM_OPENS_PER_SECOND, perSecond: env.RUNNER_STREAM_OPENS_PER_SECOND } } }
      : {}),
    ...(traces ? { tracerProvider: traces.tracerProvider } : {}),
    notify,
    logger: { info: log("info"), warn: log("warn"), error: log("error") },
  });
  stops.unshift(() => gateway.close());
  const { maxConnections, maxStreams } = gateway.connectionLimits;
  say(`› holds ${maxConnections} request connections and ${maxStreams} desktop wake streams apart (MAX_CONNECTIONS, MAX_RUNNER_STREAMS)`);
  const member = config.members[0]!;
  if (env.START_RUNNER === "1") startLocalRunner(gateway.baseUrl, member.sessionToken);
  say(`
  OpenWork remote sessions — reference gateway
    MCP endpoint : ${gateway.mcpUrl}   (MCP 2026-07-28, and 2025-11-25 … 2024-11-05 through initialize)
    Dev token    : ${member.mcpToken}   (member ${member.memberId} of ${member.organizationId}; more in ${env.DEV_CONFIG})

${connectCommands(gateway.mcpUrl, member.mcpToken)}

  Then ask the agent: "search capabilities for remote session", and run remote-session:create with
  {"target":"desktop","prompt":"hello"} (the local runner answers) or {"target":"cloud","prompt":"hello"}.
  Ctrl-C stops everything.
  `);
}

/** `DATABASE_URL` (or an embedded PostgreSQL 18 without one), proved reachable, and `LISTEN_DATABASE_URL`'s client. */
async function openDatabase() {
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    const started = Date.now();
    const pg = await startEmbeddedPostgres();
    stops.unshift(() => pg.stop());
    databaseUrl = pg.url;
    say(`› embedded PostgreSQL 18 ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const sql = postgres(databaseUrl, { max: 10, onnotice: () => {}, connect_timeout: 10 });
  stops.unshift(() => sql.end({ timeout: 5 }));
  await sql`select 1`.catch((error: unknown) => {
    throw explainDatabaseError(error, "connect");
  });
  const listenSql = env.LISTEN_DATABASE_URL ? postgres(env.LISTEN_DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 }) : undefined;
  if (listenSql) stops.unshift(() => listenSql.end({ timeout: 5 }));
  return { sql, listenSql };
}

/** `CLOUD_RESOLVER_URL`'s worker resolver, or the witness worker started here without one. */
async function cloudWorker(config: Awaited<ReturnType<typeof loadDevConfig>>): Promise<{ resolverUrl: string; gatewayKey: string }> {
  if (env.CLOUD_RESOLVER_URL) return { resolverUrl: env.CLOUD_RESOLVER_URL, gatewayKey: env.CLOUD_GATEWAY_KEY ?? "" };
  const gatewayKey = randomBytes(16).toString("hex");
  const witness = await startWitnessWorker({
    clientToken: randomBytes(16).toString("hex"),
    hostToken: randomBytes(16).toString("hex"),
    gatewayKey,
    // As den-api: the member is whoever the request's session token names.
    members: (token) => {
      const m = config.members.find((member) => member.sessionToken === token);
      return m ? { organizationId: m.organizationId, memberId: m.memberId, cloud: config.cloudOrganizations.includes(m.organizationId) } : null;
    },
    ...(env.WITNESS_OPENCODE_URL ? { opencode: { url: env.WITNESS_OPENCODE_URL, directory: process.cwd() } } : {}),
  });
  stops.unshift(() => witness.close());
  say(`› witness cloud worker on ${witness.url} (${env.WITNESS_OPENCODE_URL ? "opencode" : "echo engine"})`);
  return { resolverUrl: witness.resolverUrl, gatewayKey };
}

/** Where the gateway listens and how it is reached: PORT, HOST, PUBLIC_URL, ALLOWED_ORIGINS, OPENWORK_BASE_PATHS, TRUSTED_PROXY_ORIGINS. */
function servedAt() {
  const list = (value: string) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean);
  return {
    port: env.PORT,
    host: env.HOST,
    ...(env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL } : {}),
    ...(env.ALLOWED_ORIGINS ? { allowedOrigins: list(env.ALLOWED_ORIGINS) } : {}),
    ...(env.OPENWORK_BASE_PATHS ? { openworkBasePaths: env.OPENWORK_BASE_PATHS.split(",").map((p) => p.trim().replace(/\/+$/, "")) } : {}),
    ...(env.TRUSTED_PROXY_ORIGINS ? { trustedProxyOrigins: list(env.TRUSTED_PROXY_ORIGINS) } : {}),
  };
}

/** The reference runner (what the Electron runner does) as a child process, signed in as the first dev member. */
function startLocalRunner(gatewayUrl: string, memberToken: string): void {
  const require = createRequire(import.meta.url);
  const runnerMain = join(dirname(require.resolve("@openwork/desktop-runner/package.json")), "dist", "main.js");
  const runner: ChildProcess = spawn(process.execPath, [runnerMain], {
    env: { ...process.env, GATEWAY_URL: gatewayUrl, MEMBER_SESSION_TOKEN: memberToken, RUNNER_NAME: "Local desktop (reference runner)" },
    stdio: "inherit",
  });
  stops.unshift(
    () =>
      new Promise((resolve) => {
        if (runner.exitCode !== null) return resolve(undefined);
        runner.once("exit", resolve);
        runner.kill("SIGTERM");
      }),
  );
}

/** The NOTIFY_* settings and SMTP_URL, checked before anything starts: a typo is a start-up error naming the setting. */
function notifySettings() {
  const tuning = {
    ...(env.NOTIFY_INTERVAL_MS ? { intervalMs: env.NOTIFY_INTERVAL_MS } : {}),
    ...(env.NOTIFY_SEND_TIMEOUT_MS ? { sendTimeoutMs: env.NOTIFY_SEND_TIMEOUT_MS } : {}),
    allowPrivateNetworks: env.NOTIFY_ALLOW_PRIVATE_NETWORKS === "1",
    wakeOnHints: env.NOTIFY_WAKE_ON_HINTS === "1",
  };
  if (!env.SMTP_URL) return tuning;
  if (!env.NOTIFY_FROM) throw new StartupError("NOTIFY_FROM: required with SMTP_URL (the From of notification mail)");
  try {
    return { ...tuning, smtp: smtpFromUrl(env.SMTP_URL), from: env.NOTIFY_FROM };
  } catch (error) {
    // smtpFromUrl's messages never quote the URL (it may hold a password).
    throw new StartupError(`SMTP_URL: ${(error as Error).message}`);
  }
}

await start().catch(async (error: unknown) => {
  const explained = explainDatabaseError(error, "migrate");
  // A cause a person can act on is one line; anything else keeps its stack for a bug report.
  const line = explained instanceof StartupError ? explained.message : explained instanceof Error ? (explained.stack ?? explained.message) : String(explained);
  process.stderr.write(`gateway failed to start: ${line}\n`);
  await shutdown(1);
});
