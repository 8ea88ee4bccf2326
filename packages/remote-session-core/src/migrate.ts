import { readFile, readdir } from "node:fs/promises";
import type { Sql } from "postgres";

/** One migration: a file name (which orders it) and its SQL. */
export interface Migration {
  name: string;
  sql: string;
}

// One lock for every namespace: concurrent `create table if not exists` of the bookkeeping
// table would otherwise race between packages migrating at the same time.
const MIGRATION_LOCK = 4_711_820_231;

/** Reads the `NNNN_*.sql` files of a folder, in name order. */
export async function loadMigrations(directory: URL): Promise<Migration[]> {
  const names = (await readdir(directory)).filter((name) => /^\d{4}_.+\.sql$/.test(name)).sort();
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(new URL(name, directory), "utf8") })));
}

/**
 * Applies the migrations of `namespace` that the database has not seen, in one transaction under
 * an advisory lock, so several gateway replicas may start at once. Refuses a database that has
 * migrations this code does not know (it is newer than the code).
 */
export async function runMigrations(
  sql: Sql,
  options: { namespace: string; migrations: Migration[] },
): Promise<{ applied: string[] }> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`
      create table if not exists openwork_migrations (
        namespace text not null,
        name text not null,
        applied_at timestamptz not null default now(),
        primary key (namespace, name)
      )`;
    const rows = await tx<{ name: string }[]>`
      select name from openwork_migrations where namespace = ${options.namespace}`;
    const known = new Set(options.migrations.map((m) => m.name));
    const unknown = rows.map((r) => r.name).filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new Error(
        `${options.namespace}: the database has migrations this code does not know (${unknown.join(", ")}); it is newer than the code`,
      );
    }
    const done = new Set(rows.map((r) => r.name));
    const applied: string[] = [];
    for (const migration of options.migrations) {
      if (done.has(migration.name)) continue;
      await tx.unsafe(migration.sql);
      await tx`insert into openwork_migrations (namespace, name) values (${options.namespace}, ${migration.name})`;
      applied.push(migration.name);
    }
    return { applied };
  });
}

/** The folder of this package's SQL files (shipped in the package for other migration tools). */
export const SESSION_LEDGER_SQL_DIRECTORY = new URL("../sql/", import.meta.url);

/** Creates or updates the session ledger's tables. Safe to call from every replica at start. */
export async function migrate(sql: Sql): Promise<{ applied: string[] }> {
  return runMigrations(sql, {
    namespace: "remote-session-core",
    migrations: await loadMigrations(SESSION_LEDGER_SQL_DIRECTORY),
  });
}

