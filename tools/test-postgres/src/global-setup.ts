import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "@openwork/embedded-postgres";
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
  const server = await startEmbeddedPostgres();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`test-postgres: embedded PostgreSQL ready in ${seconds} s (${new URL(server.url).host})\n`);
  return { url: server.url, users: 0, stop: server.stop };
}
