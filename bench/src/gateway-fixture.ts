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

/** One gateway process's worth of wiring, served on 127.0.0.1 over real HTTP. */
export async function benchGateway(databaseUrl: string, extra: Partial<Parameters<typeof serveGateway>[0]> = {}) {
  const sql = postgres(databaseUrl, { max: 20, onnotice: () => {} });
  const gateway = await serveGateway({
    sql,
    port: 0,
    members: () => [member],
    cloudEnabled: () => false,
    runnerTokenSecret: "bench-runner-secret-0123456789abcdef",
    createRateLimit: { bucket: "create", limit: 1_000_000, windowMs: 60_000 },
    ...extra,
  });
  /** Registers a runner of the bench member and returns its token. */
  const runnerToken = async (runnerId: string): Promise<string> => {
    const minted = await requestRunnerToken({
      baseUrl: gateway.baseUrl,
      memberToken: member.sessionToken,
      request: { runnerId, name: runnerId, platform: "linux", appVersion: "bench", protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: [...RUNNER_CAPABILITIES] },
    });
    return minted.token;
  };
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
    /** Runs a capability as the bench member, straight on the source (no MCP transport). */
    execute: (name: string, body: unknown) => gateway.source.execute(memberContext(member), parseName(name)!, { body }),
    close: async () => {
      await gateway.close();
      await sql.end({ timeout: 5 });
    },
  };
}
