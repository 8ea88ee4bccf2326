import { randomBytes } from "node:crypto";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, inject } from "vitest";
import "./provided-context.js";

export { type EmbeddedServer, startEmbeddedPostgres } from "@openwork/embedded-postgres";

/** A database of its own for one test file, on the run's PostgreSQL. */
export interface TestDatabase {
  /** Connection string of this database only. */
  url: string;
  /** A postgres.js client on it (pool of 10). */
  sql: Sql;
  /** Closes the client and drops the database. */
  drop: () => Promise<void>;
}

/**
 * Creates a fresh, empty database on the run's PostgreSQL (`DATABASE_URL`, or the embedded
 * server the global setup started). Databases rather than schemas, so LISTEN/NOTIFY channels
 * and advisory locks of parallel test files never see each other.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("testDatabaseUrl");
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const sql = postgres(url, { max: 10, onnotice: () => {} });
  return {
    url,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 });
      const cleanup = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropForced(cleanup, name);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/**
 * Drops a test database, ending the test's leftover connections. A role that is not a superuser
 * (CI's on Debian's server) may not end an autovacuum worker busy in that database: then the drop
 * is refused (42501) until the worker is done, which takes moments; it is tried again meanwhile.
 */
async function dropForced(admin: Sql, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      return;
    } catch (error) {
      const refused = error instanceof postgres.PostgresError && error.code === "42501";
      if (!refused || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Registers `beforeAll`/`afterAll` hooks that give the calling test file its own database.
 * Read `.current` inside tests, not at import time.
 */
export function useTestDatabase(): { readonly current: TestDatabase } {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return {
    get current(): TestDatabase {
      if (!database) throw new Error("useTestDatabase(): read .current inside a test or hook");
      return database;
    },
  };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
export { killableClient, ProcessKilled } from "./killable-client.js";
export { describeSchema, dumpMigrations } from "./schema-dump.js";
export { replannedFunctions } from "./replanned-functions.js";
export { type ExplainedPlan, explainPlan, type PlanNode, planNodes, planOutline } from "./explain-plan.js";
