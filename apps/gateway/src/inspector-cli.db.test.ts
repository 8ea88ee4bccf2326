import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inspectorCommand } from "./connect-commands.js";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

// A third-party client: the MCP Inspector's CLI 2.12.0, installed into .tools/ by npm test.
const run = promisify(execFile);
const INSPECTOR = fileURLToPath(new URL("../../../.tools/node_modules/.bin/mcp-inspector", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const db = useTestDatabase();
const member: DevMember = fixedDevMember("inspector");
let gateway: Awaited<ReturnType<typeof serveGateway>>;
let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 5, onnotice: () => {} });
  gateway = await serveGateway({ sql, port: 0, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: "inspector-runner-secret-0123456789ab" });
});
afterAll(async () => {
  await gateway?.close();
  await sql?.end({ timeout: 5 });
});

async function inspector(...args: string[]): Promise<string> {
  const { stdout } = await run(INSPECTOR, ["--cli", gateway.mcpUrl, "--transport", "http", "--header", `Authorization: Bearer ${member.mcpToken}`, ...args], {
    timeout: 120_000,
  });
  return stdout;
}

it("lists the tools, calls execute_capability and reports the card wiring", async () => {
  const tools = JSON.parse(await inspector("--method", "tools/list")) as { tools: { name: string }[] };
  expect(tools.tools.map((t) => t.name).sort()).toEqual(["execute_capability", "search_capabilities"]);

  const called = JSON.parse(await inspector("--method", "tools/call", "--tool-name", "execute_capability", "--tool-arg", "name=remote-session:targets")) as {
    structuredContent: unknown;
  };
  expect(called.structuredContent).toEqual({
    targets: [{ name: "desktop", label: "Desktop", available: false, default: true, machines: [] }],
    computers: [],
    cloud: { available: false },
  });

  const appInfo = (await inspector("--advertise-apps", "--app-info", "--method", "tools/list"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { toolName: string; hasApp: boolean; resourceUri?: string; resourceMimeType?: string });
  expect(appInfo.find((a) => a.toolName === "execute_capability")).toMatchObject({
    hasApp: true,
    resourceUri: "ui://openwork/remote-session/v1/card.html",
    resourceMimeType: "text/html;profile=mcp-app",
  });
  expect(appInfo.find((a) => a.toolName === "search_capabilities")?.hasApp).toBe(false);
}, 180_000);

/** The README's Inspector command, its continuation lines joined, as a reader copies it. */
async function readmeInspectorCommand(): Promise<string> {
  const readme = await readFile(`${ROOT}README.md`, "utf8");
  const command = /^npx [^\n]*@modelcontextprotocol\/inspector[^\n]*?(?:\\\n[^\n]*?)*$/m.exec(readme)?.[0];
  expect(command, "the README shows an Inspector command").toBeDefined();
  return command!.replace(/\s*\\\n\s*/g, " ");
}

it("runs the README's Inspector command as written, from the repository folder, and npm start prints the same", async () => {
  const written = await readmeInspectorCommand();
  const filled = written.replace("http://127.0.0.1:8787/mcp/agent", gateway.mcpUrl).replace("<dev token>", member.mcpToken);
  expect(filled).toBe(inspectorCommand(gateway.mcpUrl, member.mcpToken));
  // From the repository folder, whose .npmrc is engine-strict, through npx as a reader runs it
  // (its package comes from npm's cache: npm test installed the same version into .tools/).
  const { stdout } = await run("bash", ["-c", filled], { cwd: ROOT, timeout: 150_000, env: { ...process.env, npm_config_prefer_offline: "true" } });
  expect((JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((t) => t.name).sort()).toEqual(["execute_capability", "search_capabilities"]);
}, 180_000);
