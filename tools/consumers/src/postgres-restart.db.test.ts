import { spawn } from "node:child_process";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type EmbeddedServer, startEmbeddedPostgres } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsumerFolder, cleanEnv, installConsumer } from "./consumer-folder.js";

// The packages as a host installs them from npm: beside the stock postgres.js 3.4.9, without the
// patch this repository applies to its own copy. PostgreSQL (a server of this file's own) is
// restarted under load; the host must come through it as the reference gateway does.
const PACKAGES = ["remote-session-core", "runner-protocol", "desktop-target", "mcp-app-card", "mcp-capability"];
const THIRD_PARTY = [
  "zod",
  "postgres",
  "ky",
  "eventsource-parser",
  "@modelcontextprotocol/server",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/ext-apps",
];
let folder: ConsumerFolder;
let server: EmbeddedServer;

beforeAll(async () => {
  [folder, server] = await Promise.all([installConsumer(PACKAGES, THIRD_PARTY), startEmbeddedPostgres()]);
  await cp(new URL("../fixtures/restart-host/", import.meta.url), join(folder.dir, "restart-host"), { recursive: true });
});
afterAll(async () => {
  await server?.stop();
  await folder?.remove();
});

interface HostRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the host on `url`; restarts the server once the host says it is loading, then tells it so. */
function runRestartHost(url: string): Promise<HostRun> {
  const child = spawn(process.execPath, [join(folder.dir, "restart-host", "host.mjs")], { cwd: folder.dir, env: cleanEnv({ DATABASE_URL: url }) });
  let stdout = "";
  let stderr = "";
  let restarting: Promise<void> | undefined;
  // Writing to a host that already died fails (EPIPE): what it printed says why it died.
  child.stdin.on("error", () => {});
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk));
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
    if (!String(chunk).includes("loading")) return;
    restarting = server.restart().then(() => void child.stdin.write("restarted\n"));
  });
  // A bound, so a host that hangs fails with what it printed instead of a test timeout.
  const bound = setTimeout(() => child.kill("SIGKILL"), 100_000);
  return new Promise((resolve) => {
    child.on("exit", (code) => {
      clearTimeout(bound);
      // A host that died mid-restart still leaves the server up for the next test.
      void Promise.resolve(restarting)
        .catch(() => {})
        .then(() => resolve({ code, stdout, stderr }));
    });
  });
}

it("installs the stock postgres.js from npm, not the patched copy of the workspace", async () => {
  const connection = await readFile(join(folder.dir, "node_modules", "postgres", "src", "connection.js"), "utf8");
  expect(JSON.parse(await readFile(join(folder.dir, "node_modules", "postgres", "package.json"), "utf8")).version).toBe("3.4.9");
  expect(connection).not.toContain("openwork patch");
  // The line that crashes a process when a reserved connection is written to after its close.
  expect(connection).toContain("const x = socket.write(chunk, fn)");
});

// Without desktop-target's guarded reserve the host dies at the restart: "TypeError: Cannot read
// properties of null (reading 'write') at Immediate.nextWrite" (porsager/postgres#1154, #1208),
// or, once that is caught, a transaction waits forever for a reserve postgres.js lost.
it("a host on stock postgres.js keeps running through a PostgreSQL restart under load: creates succeed again, LISTEN comes back, every answered create is stored", async () => {
  const run = await runRestartHost(server.url);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  const seen = JSON.parse(run.stdout.split("\n").filter(Boolean).at(-1)!) as {
    created: number;
    createdAfterRestart: number;
    transactions: number;
    refusals: Record<string, number>;
    failedTransactions: Record<string, number>;
    missing: string[];
    listensBack: boolean;
  };
  expect(seen.createdAfterRestart).toBeGreaterThanOrEqual(30);
  expect(seen.transactions).toBeGreaterThan(0);
  expect(seen.missing).toEqual([]);
  expect(seen.listensBack).toBe(true);
  // Creates refused during the outage got the typed, retryable error.
  for (const refusal of Object.keys(seen.refusals)) expect(refusal).toBe("internal_error/true");
  // Transactions cut by the restart failed with a connection error, the only kind there was.
  for (const code of Object.keys(seen.failedTransactions)) expect(code).toMatch(/^(CONNECTION_CLOSED|CONNECT_TIMEOUT|E[A-Z]+|57P0[1-3])$/);
}, 120_000);
