import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "@openwork/embedded-postgres";
import postgres from "postgres";
import "./provided-context.js";

interface SharedServer {
  url: string;
  /** The newest database's oid when the run began: this run's test databases come after it. */
  databasesAfter: number;
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
  project.provide("testDatabasesAfter", server.databasesAfter);
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
  if (external) return { url: external, users: 0, databasesAfter: await newestDatabase(external), stop: async () => {} };
  const started = performance.now();
  // pg_stat_statements: the last test group checks that every statement names its organization.
  const server = await startEmbeddedPostgres({ settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.max": "20000" } });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`test-postgres: embedded PostgreSQL ready in ${seconds} s (${new URL(server.url).host})\n`);
  return { url: server.url, users: 0, databasesAfter: await newestDatabase(server.url), stop: server.stop };
}

async function newestDatabase(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ oid: number }[]>`select max(oid)::int8 as oid from pg_database`;
    return Number(row!.oid);
  } finally {
    await sql.end();
  }
}
