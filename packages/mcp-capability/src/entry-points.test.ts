import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const packages = join(here, "..", "..");
let folder: string;

/** Packs a workspace package as npm would publish it (its `files` only) and unpacks it into the folder's node_modules. */
async function install(name: string, directory: string): Promise<void> {
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", folder], { cwd: directory });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  const target = join(folder, "node_modules", name);
  await mkdir(target, { recursive: true });
  await run("tar", ["-xzf", join(folder, filename), "-C", target, "--strip-components=1"]);
}

/** Links a third-party dependency from this workspace (no registry: tests stay on this machine). */
async function link(name: string, from: string): Promise<void> {
  // The package folder: where its resolved entry sits under node_modules/<name>.
  const entry = await realpath(createRequire(join(from, "package.json")).resolve(name));
  const resolved = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}`.length);
  await mkdir(dirname(join(folder, "node_modules", name)), { recursive: true });
  await symlink(resolved, join(folder, "node_modules", name));
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "openwork-entry-"));
  await writeFile(join(folder, "package.json"), JSON.stringify({ name: "host-without-mcp-sdk", type: "module", private: true }));
  await install("@openwork/mcp-capability", join(packages, "mcp-capability"));
  await install("@openwork/mcp-app-card", join(packages, "mcp-app-card"));
  await install("@openwork/remote-session-core", join(packages, "remote-session-core"));
  await link("zod", join(packages, "mcp-capability"));
  await link("postgres", join(packages, "remote-session-core"));
  // The core's own dependency (its SSE follower).
  await link("eventsource-parser", join(packages, "remote-session-core"));
}, 60_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

it("imports the main entry in a host that has no MCP SDK and no ext-apps installed", async () => {
  // A clean environment: nothing the test runner sets may lead resolution back into the workspace.
  const node = (script: string) => run(process.execPath, ["--input-type=module", "-e", script], { cwd: folder, env: { PATH: process.env.PATH } });
  const script = `
    const absent = [];
    for (const peer of ["@modelcontextprotocol/sdk/server/mcp.js", "@modelcontextprotocol/server", "@modelcontextprotocol/ext-apps/server"]) {
      await import(peer).then(() => {}, () => absent.push(peer));
    }
    const capability = await import("@openwork/mcp-capability");
    const card = await import("@openwork/mcp-app-card");
    const source = capability.createRemoteSessionSource({ targets: [], ledger: {} });
    console.log(JSON.stringify({ absent, kind: source.kind, parsed: source.parseName("remote-session:read"), uri: card.CARD_RESOURCE_URI }));`;
  expect(JSON.parse((await node(script)).stdout)).toEqual({
    absent: ["@modelcontextprotocol/sdk/server/mcp.js", "@modelcontextprotocol/server", "@modelcontextprotocol/ext-apps/server"],
    kind: "remoteSession",
    parsed: { kind: "remoteSession", name: "remote-session:read", action: "read" },
    uri: "ui://openwork/remote-session/v1/card.html",
  });
  // Each adapter runs its SDK's code (ext-apps' helpers; the server's skills extension), so without
  // its peers it names the one missing, and the main entry still loads.
  const v1 = await node('await import("@openwork/mcp-capability/sdk-v1")').catch((error: { stderr: string }) => error);
  expect((v1 as { stderr: string }).stderr).toMatch(/Cannot find (package|module) '@modelcontextprotocol\/ext-apps'/);
  const v2 = await node('await import("@openwork/mcp-capability/server-v2")').catch((error: { stderr: string }) => error);
  expect((v2 as { stderr: string }).stderr).toMatch(/Cannot find (package|module) '@modelcontextprotocol\/server'/);
});
