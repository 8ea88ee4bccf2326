import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedDevMember, memberContext, serveGateway } from "@openwork/gateway";
import { parseName } from "@openwork/mcp-capability";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsumerFolder, installConsumer } from "./consumer-folder.js";

// An Electron-main-shaped runner: an entry importing `@openwork/runner-protocol/client` from the
// tarballs, bundled by esbuild into one file, run alone against the reference gateway.
const db = useTestDatabase();
const member = fixedDevMember("bundle", ["mcp:write"]);
const cleanups: (() => Promise<unknown> | unknown)[] = [];
let folder: ConsumerFolder;
let bundle: string;
let meta: { inputs: Record<string, unknown> };

beforeAll(async () => {
  // postgres too: remote-session-core's peer, which npm would otherwise resolve to the newest
  // release its cached metadata names, a tarball the offline cache may not hold.
  folder = await installConsumer(["runner-protocol", "remote-session-core"], ["zod", "postgres", "ky", "eventsource-parser", "esbuild"]);
  cleanups.push(() => folder.remove());
  const app = join(folder.dir, "app");
  await mkdir(app);
  await copyFile(new URL("../fixtures/electron-runner/main.ts", import.meta.url), join(app, "main.ts"));
  const esbuild = join(folder.dir, "node_modules", "esbuild", "bin", "esbuild");
  const args = ["app/main.ts", "--bundle", "--platform=node", "--format=esm", "--outfile=app/bundle.mjs", "--metafile=app/meta.json", "--log-level=warning"];
  await folder.node([esbuild, ...args]);
  meta = JSON.parse(await readFile(join(app, "meta.json"), "utf8"));
  // The bundle runs from a folder of its own, with no node_modules anywhere above it.
  const alone = await mkdtemp(join(tmpdir(), "openwork-bundle-"));
  cleanups.push(() => rm(alone, { recursive: true, force: true }));
  bundle = join(alone, "bundle.mjs");
  await copyFile(join(app, "bundle.mjs"), bundle);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

it("bundles the client from the installed tarball into one file without node:crypto", async () => {
  const inputs = Object.keys(meta.inputs);
  expect(inputs).toContain("node_modules/@openwork/runner-protocol/dist/client.js");
  // Only the folder's own files: nothing of the workspace was reachable.
  expect(inputs.filter((input) => !input.startsWith("node_modules/") && input !== "app/main.ts")).toEqual([]);
  const code = await readFile(bundle, "utf8");
  expect(code).not.toMatch(/node:crypto|from "crypto"|require\("crypto"\)|createHmac/);
});

it("registers, claims a desktop task made through the gateway's capability, posts its reply and completes", async () => {
  const sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
  const gateway = await serveGateway({
    sql,
    members: () => [member],
    cloudEnabled: () => false,
    runnerTokenSecret: "bundle-runner-secret-0123456789abcdef",
    port: 0,
  });
  cleanups.push(() => gateway.close());
  const child = spawn(process.execPath, [bundle], {
    env: { PATH: process.env.PATH, GATEWAY_URL: gateway.baseUrl, MEMBER_SESSION_TOKEN: member.sessionToken },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const deadline = Date.now() + 20_000;
  while (gateway.hub.stats().runnerStreams < 1) {
    if (Date.now() > deadline) throw new Error(`the bundled runner never opened its wake stream:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const execute = (name: string, body: Record<string, unknown>) => gateway.source.execute(memberContext(member), parseName(name)!, { body });
  const created = await execute("remote-session:create", { target: "desktop", title: "bundle", prompt: "hello from the host" });
  expect(created.isError).toBeUndefined();
  const sessionId = String(created.structuredContent!.sessionId);
  expect(await exited, output).toBe(0);
  expect(output).toContain("task done");
  const read = await execute("remote-session:read", { sessionId });
  expect(read.structuredContent).toMatchObject({ sessionId, state: "idle", finalAssistantText: "bundled runner heard 4 words" });
});
