import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { REMOTE_SESSIONS_SKILL } from "@openwork/mcp-capability";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// The remote-sessions skill through the MCP skills extension (SEP-2640) of the v2 server package,
// read with the v2 client's SkillsClient, which verifies each file against its listed digest.
const db = useTestDatabase();
const member = fixedDevMember("skills");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member);
});
afterAll(async () => {
  await test?.close();
});

describe("the remote-sessions skill over the MCP skills extension", () => {
  it("is listed, got and read, verified, with the same text search_capabilities hands out", async () => {
    const skills = new SkillsClient(test.client);
    expect(skills.supported).toBe(true);
    const { skills: listed } = await skills.list();
    expect(listed).toEqual([
      expect.objectContaining({
        uri: "skill://remote-sessions/SKILL.md",
        frontmatter: expect.objectContaining({ name: "remote-sessions", description: expect.stringContaining("Hand work to") }),
      }),
    ]);
    const file = await skills.read(listed[0]!);
    expect(file).toMatchObject({ verified: true, text: REMOTE_SESSIONS_SKILL.source });
    expect(file.body).toContain("## Fast path");
  });

  it("changes nothing for a client that does not know the extension (sdk 1.x): the two tools as before", async () => {
    const client = new ClientV1({ name: "plain", version: "1.0.0" });
    await client.connect(new TransportV1(new URL(test.gateway.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${member.mcpToken}` } } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["execute_capability", "search_capabilities"]);
      const run = (await client.callTool({ name: "execute_capability", arguments: { name: "skill:remote-sessions" } })) as { content: { text: string }[] };
      expect(JSON.parse(run.content[0]!.text)).toMatchObject({ kind: "skill", content: REMOTE_SESSIONS_SKILL.source });
    } finally {
      await client.close();
    }
  });
});
