import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type DevMember, memberContext, serveGateway } from "@openwork/gateway";
import { parseName } from "@openwork/mcp-capability";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken, type RunnerClient } from "@openwork/runner-protocol/client";
import postgres from "postgres";

export const member: DevMember = {
  name: "bench",
  organizationId: "org_bench",
  userId: "user_bench",
  memberId: "mem_bench",
  mcpToken: "mcp_bench_token_0123456789",
  sessionToken: "session_bench_token_0123456789",
  scopes: ["mcp:read", "mcp:write"],
};

/** The runner-token secret of the bench's gateways. */
export const BENCH_RUNNER_SECRET = "bench-runner-secret-0123456789abcdef";

/**
 * Member `i` of the bench member's organization, each with its own tokens: for benches that spread
 * many desktops over members (one gateway process holds 20 wake streams of a member).
 */
export const benchMember = (i: number): DevMember => ({
  name: `bench-${i}`,
  organizationId: member.organizationId,
  userId: `user_bench_${i}`,
  memberId: `mem_bench_${i}`,
  mcpToken: `mcp_bench_${String(i).padStart(6, "0")}_0123456789`,
  sessionToken: `session_bench_${String(i).padStart(6, "0")}_0123456789`,
  scopes: ["mcp:read", "mcp:write"],
});

/** Registers a runner named `runnerId` of `as` (the bench member by default) at `baseUrl`: the token mint's answer. */
export const mintBenchRunner = (baseUrl: string, runnerId: string, as: DevMember = member) =>
  requestRunnerToken({
    baseUrl,
    memberToken: as.sessionToken,
    request: {
      runnerId,
      name: runnerId,
      platform: "linux",
      appVersion: "bench",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });

/** The reference gateway (its built main) in a process of its own, with no runner of its own and no cloud. */
export const spawnGatewayProcess = (options: { port: number; databaseUrl: string; devConfig: string; env?: Record<string, string> }) =>
  spawn(process.execPath, [new URL("../../apps/gateway/dist/main.js", import.meta.url).pathname], {
    env: {
      PATH: process.env.PATH,
      PORT: String(options.port),
      DATABASE_URL: options.databaseUrl,
      DEV_CONFIG: options.devConfig,
      START_RUNNER: "0",
      CLOUD_RESOLVER_URL: "http://127.0.0.1:9",
      CLOUD_GATEWAY_KEY: "none",
      ...options.env,
    },
    stdio: "ignore",
  });

/** One gateway process's worth of wiring, served on 127.0.0.1 over real HTTP. */
export async function benchGateway(
  databaseUrl: string,
  extra: Partial<Parameters<typeof serveGateway>[0]> = {},
  /** Called for every statement the gateway's client sends (to count them). */
  onStatement?: (query: string) => void,
) {
  const sql = postgres(databaseUrl, {
    max: 20,
    onnotice: () => {},
    ...(onStatement ? { debug: (_connection: number, query: string) => onStatement(query) } : {}),
  });
  const gateway = await serveGateway({
    sql,
    port: 0,
    members: () => [member],
    cloudEnabled: () => false,
    runnerTokenSecret: BENCH_RUNNER_SECRET,
    createRateLimit: { bucket: "create", limit: 1_000_000, windowMs: 60_000 },
    ...extra,
  });
  /** Runs a capability as the bench member, straight on the source (no MCP transport). */
  const execute = (name: string, body: unknown) => gateway.source.execute(memberContext(member), parseName(name)!, { body });
  /** Registers a runner of the bench member and returns its token. */
  const runnerToken = async (runnerId: string): Promise<string> => (await mintBenchRunner(gateway.baseUrl, runnerId)).token;
  /** A runner client of the bench member; `fetch` replaces the network (e.g. the gateway's handler in process). */
  const runnerClient = async (runnerId: string, fetch?: typeof globalThis.fetch): Promise<RunnerClient> =>
    createRunnerClient({ baseUrl: gateway.baseUrl, token: await runnerToken(runnerId), ...(fetch ? { fetch } : {}) });
  const mcpClient = async (as: DevMember = member) => {
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${as.mcpToken}` } } }));
    return client;
  };
  return {
    gateway,
    sql,
    runnerClient,
    runnerToken,
    mcpClient,
    execute,
    /** Queues `count` store-and-forward tasks on the bench member's desktops (any runner may claim them), deliverable for an hour. */
    queueTasks: async (count: number) => {
      const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
      for (let i = 0; i < count; i++) {
        const result = await execute("remote-session:create", { target: "desktop", title: `t${i}`, deliverBy });
        if (result.isError) throw new Error(result.content[0]?.text);
      }
    },
    close: async () => {
      await gateway.close();
      await sql.end({ timeout: 5 });
    },
  };
}
