import { readFile, readdir } from "node:fs/promises";
import type { ReservedSql, Sql } from "postgres";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/** One migration: a file name (which orders it) and its SQL. */
export interface Migration {
  name: string;
  sql: string;
}

// One lock for every namespace: concurrent `create table if not exists` of the bookkeeping
// table would otherwise race between packages migrating at the same time.
const MIGRATION_LOCK = 4_711_820_231;
/** PostgreSQL 15: the oldest server the SQL is written and tested for. */
const OLDEST_SERVER = 150_000;

/** Reads the `NNNN_*.sql` files of a folder, in name order (for hosts that run the shipped files themselves). */
export async function loadMigrations(directory: URL): Promise<Migration[]> {
  const names = (await readdir(directory)).filter((name) => /^\d{4}_.+\.sql$/.test(name)).sort();
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(new URL(name, directory), "utf8") })));
}

/**
 * Applies the migrations of `namespace` that the database has not seen, each in its own
 * transaction, all under one advisory lock held on a reserved connection, so several gateway
 * replicas may start at once. Refuses a server older than PostgreSQL 15 and a database that has
 * migrations this code does not know (it is newer than the code), before changing anything.
 */
export async function runMigrations(sql: Sql, options: { namespace: string; migrations: readonly Migration[] }): Promise<{ applied: string[] }> {
  const connection = await sql.reserve();
  try {
    const [{ version } = { version: 0 }] = await connection<{ version: number }[]>`select current_setting('server_version_num')::int as version`;
    if (version < OLDEST_SERVER) {
      throw new Error(`${options.namespace}: PostgreSQL ${Math.floor(version / 10_000)} is too old; remote sessions need PostgreSQL 15 or later`);
    }
    await connection`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      return await applyPending(connection, options);
    } finally {
      await connection`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    connection.release();
  }
}

async function applyPending(sql: ReservedSql, options: { namespace: string; migrations: readonly Migration[] }): Promise<{ applied: string[] }> {
  await sql`
    create table if not exists openwork_migrations (
      namespace text not null,
      name text not null,
      applied_at timestamptz not null default now(),
      primary key (namespace, name)
    )`;
  const rows = await sql<{ name: string }[]>`select name from openwork_migrations where namespace = ${options.namespace}`;
  const known = new Set(options.migrations.map((m) => m.name));
  const unknown = rows.map((r) => r.name).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(`${options.namespace}: the database has migrations this code does not know (${unknown.join(", ")}); it is newer than the code`);
  }
  const done = new Set(rows.map((r) => r.name));
  const applied: string[] = [];
  for (const migration of options.migrations) {
    if (done.has(migration.name)) continue;
    // A reserved connection has no begin(): the transaction is spelled out on it.
    await sql.unsafe("begin");
    try {
      await sql.unsafe(migration.sql);
      await sql`insert into openwork_migrations (namespace, name) values (${options.namespace}, ${migration.name})`;
      await sql.unsafe("commit");
    } catch (error) {
      await sql.unsafe("rollback");
      throw error;
    }
    applied.push(migration.name);
  }
  return { applied };
}

/** The folder of this package's SQL files (shipped in the package for other migration tools). */
export const SESSION_LEDGER_SQL_DIRECTORY = new URL("../sql/", import.meta.url);

/**
 * Creates or updates the session ledger's tables. Safe to call from every replica at start. The
 * SQL is embedded in the module (built from `sql/*.sql`), so a bundled host needs no files.
 */
export async function migrate(sql: Sql): Promise<{ applied: string[] }> {
  return runMigrations(sql, { namespace: "remote-session-core", migrations: MIGRATIONS });
}
