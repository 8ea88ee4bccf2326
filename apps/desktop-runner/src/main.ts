#!/usr/bin/env node
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, resolve } from "node:path";
import { z } from "zod";
import { createEchoEngine } from "./echo-engine.js";
import type { RunnerWorkspace } from "./inventory-reports.js";
import { createOpencodeEngine } from "./opencode-engine.js";
import { DesktopRevokedError, startDesktopRunner } from "./start-desktop-runner.js";

// The only place that reads the environment.
const env = z
  .object({
    GATEWAY_URL: z.url(),
    MEMBER_SESSION_TOKEN: z.string().min(16),
    RUNNER_NAME: z.string().min(1).max(120).default(hostname()),
    RUNNER_ID_FILE: z.string().default(".openwork-dev/runner-id"),
    /** A local opencode server to run sessions in; without it, the echo engine answers. */
    OPENCODE_URL: z.url().optional(),
    OPENCODE_DIRECTORY: z.string().optional(),
    /** The folders (projects) this desktop serves, comma-separated, the active one first. Default OPENCODE_DIRECTORY, else the current folder. */
    WORKSPACES: z.string().optional(),
  })
  .parse(process.env);

/** The install id: made once, then kept, like the Electron app's persisted UUID. */
async function runnerId(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    const id = `runner-${randomUUID()}`;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, id);
    return id;
  }
}

/** A folder as a workspace: its name, and an id that stays the same for the same folder. */
function workspaceOf(directory: string): RunnerWorkspace {
  const path = resolve(directory);
  return { workspaceId: `ws_${createHash("sha256").update(path).digest("hex").slice(0, 16)}`, name: basename(path) || path, directory: path };
}
const folders = (env.WORKSPACES ?? env.OPENCODE_DIRECTORY ?? process.cwd())
  .split(",")
  .map((folder) => folder.trim())
  .filter(Boolean);

const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
  process.stdout.write(`[desktop-runner] ${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`);
const runner = await startDesktopRunner({
  gatewayUrl: env.GATEWAY_URL,
  memberToken: env.MEMBER_SESSION_TOKEN,
  runnerId: await runnerId(env.RUNNER_ID_FILE),
  name: env.RUNNER_NAME,
  workspaces: folders.map(workspaceOf),
  engine: env.OPENCODE_URL
    ? createOpencodeEngine({ url: env.OPENCODE_URL, ...(env.OPENCODE_DIRECTORY ? { directory: env.OPENCODE_DIRECTORY } : {}) })
    : createEchoEngine(),
  logger: { info: log("info"), warn: log("warn") },
}).catch((error: unknown) => {
  if (!(error instanceof DesktopRevokedError)) throw error;
  log("warn")(`not started: ${error.message}`);
  process.exit(2);
});
log("info")(`signed in to ${env.GATEWAY_URL} as "${env.RUNNER_NAME}"; waiting for work`);
// A revoked desktop stops for good: only its owner can re-enable it.
void runner.ended.then((end) => {
  if (end.reason !== "revoked") return;
  log("warn")(`stopped: ${end.message}`);
  process.exit(2);
});
const stop = () => void runner.stop().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
