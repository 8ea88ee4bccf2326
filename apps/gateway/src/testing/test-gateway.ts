import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import postgres from "postgres";
import type { DevMember } from "../dev-members.js";
import { serveGateway } from "../serve-gateway.js";

type ServeOptions = Parameters<typeof serveGateway>[0];

/**
 * A gateway on a test database for one member (cloud off unless `extra` says otherwise), with the
 * v2 MCP client connected as that member, and one `close` for all of it.
 */
export async function startTestGateway(databaseUrl: string, member: DevMember, extra: Partial<ServeOptions> = {}) {
  const sql = postgres(databaseUrl, { max: 5, onnotice: () => {} });
  const gateway = await serveGateway({
    sql,
    port: 0,
    members: () => [member],
    cloudEnabled: () => false,
    runnerTokenSecret: "test-gateway-runner-secret-0123456789",
    ...extra,
  });
  const client = new Client({ name: `test-${member.name}`, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }),
  );
  type Result = { isError?: boolean; structuredContent: Record<string, unknown> };
  return {
    gateway,
    sql,
    client,
    /** execute_capability as the member. */
    execute: async (name: string, body: unknown) => (await client.callTool({ name: "execute_capability", arguments: { name, body } })) as Result,
    close: async () => {
      await client.close();
      await gateway.close();
      await sql.end({ timeout: 5 });
    },
  };
}
