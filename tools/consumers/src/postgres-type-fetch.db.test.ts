import { execFile } from "node:child_process";
import { once } from "node:events";
import { cp } from "node:fs/promises";
import { type AddressInfo, createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { type EmbeddedServer, startEmbeddedPostgres } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsumerFolder, installConsumer } from "./consumer-folder.js";

// The other postgres.js 3.4.9 failure of a restart, which no package can catch because it happens
// on the host's own handle: a new connection fetches its array types (fetch_types, on by
// default) before its first query; when the server goes down during that fetch, the fetch's
// rejection has no handler (porsager/postgres#1192, #1223) and Node ends the process. The
// README's recipe (remote-session-core, "The database handle") is the patch below, as a host
// applies it, from the packed core it ships in; this proves it on the stock postgres.js from npm.
const PATCH = "node_modules/@openwork/remote-session-core/patches/postgres@3.4.9.patch";
const run = promisify(execFile);
let server: EmbeddedServer;
let stock: ConsumerFolder;
let patched: ConsumerFolder;

beforeAll(async () => {
  [server, stock, patched] = await Promise.all([
    startEmbeddedPostgres(),
    installConsumer([], ["postgres"]),
    installConsumer(["remote-session-core"], ["postgres", "zod"]),
  ]);
  // The recipe for an npm host (a postinstall step); pnpm's patchedDependencies applies the same diff.
  await run("git", ["apply", "--directory=node_modules/postgres", PATCH], { cwd: patched.dir });
  await copyFixture(stock);
  await copyFixture(patched);
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([stock?.remove(), patched?.remove()]);
});

async function copyFixture(folder: ConsumerFolder): Promise<void> {
  await cp(new URL("../fixtures/restart-host/type-fetch.mjs", import.meta.url), join(folder.dir, "type-fetch.mjs"));
}

/**
 * A TCP proxy to `port` that never forwards the first client chunk holding the array-type query:
 * that query is in flight, unanswered, when the server is restarted (`held` resolves then).
 * Every later connection passes through untouched.
 */
async function typeQueryHolder(port: number): Promise<{ port: number; held: Promise<void>; close(): void }> {
  let hold: () => void;
  const held = new Promise<void>((resolve) => (hold = resolve));
  let holding = true;
  const proxy: Server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port });
    let stalled = false;
    client.on("data", (chunk: Buffer) => {
      if (holding && chunk.includes("typarray")) [holding, stalled] = [false, true];
      if (stalled) return hold();
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const closeBoth = () => (client.destroy(), upstream.destroy());
    client.on("close", closeBoth).on("error", closeBoth);
    upstream.on("close", closeBoth).on("error", closeBoth);
  });
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  return { port: (proxy.address() as AddressInfo).port, held, close: () => proxy.close() };
}

/** Runs the fixture through the proxy, restarting the server while the type query is held back. */
async function runThroughRestart(folder: ConsumerFolder): Promise<{ code: number; stdout: string; stderr: string }> {
  const target = new URL(server.url);
  const holder = await typeQueryHolder(Number(target.port));
  target.port = String(holder.port);
  const running = folder.node([join(folder.dir, "type-fetch.mjs")], { DATABASE_URL: target.toString() }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
  await holder.held;
  await server.restart();
  const result = await running;
  holder.close();
  return result;
}

it("on the stock postgres.js, a restart during a new connection's type fetch ends the host with an unhandled rejection", async () => {
  const result = await runThroughRestart(stock);
  expect(result.code, result.stderr + result.stdout).toBe(1);
  // Node's report of an unhandled rejection: the restart's error (57P01 as the server goes, 57P03
  // from the reconnect while it starts, or ECONNRESET), which the host's own query never saw.
  expect(result.stderr).toContain("triggerUncaughtException(err, true /* fromPromise */)");
  expect(result.stderr).toMatch(/code: '(57P0[13]|ECONNRESET)'/);
  expect(result.stdout).toBe("");
});

it("with the documented patch applied, the host lives on and its query settles: answered, or refused with a catchable error while the server starts", async () => {
  const result = await runThroughRestart(patched);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  const outcome = JSON.parse(result.stdout) as { one?: number; rejected?: string };
  expect(outcome.one === 1 || /^(57P0[13]|CONNECTION_[A-Z]+|E[A-Z]+)$/.test(outcome.rejected ?? ""), result.stdout).toBe(true);
});
