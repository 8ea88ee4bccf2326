import { readFile, readdir } from "node:fs/promises";
import type { ReservedSql, Sql } from "postgres";
import { guardedReserve } from "./guarded-reserve.js";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/** One migration: a file name (which orders it) and its SQL. */
export interface Migration {
  name: string;
  sql: string;
  /**
   * Why the schema after this migration breaks code of the release before it (a replica not yet
   * upgraded during a rolling deploy), from the file's `-- breaking:` line; absent when it does not.
   */
  breaking?: string;
}

/** Where a package's tables live, and the migrations to apply there. */
export interface MigrationOptions {
  /** Names this package's migrations in the bookkeeping table. */
  namespace: string;
  migrations: readonly Migration[];
  /**
   * The PostgreSQL schema the tables go into, created when missing. The packages' queries name
   * tables unqualified, so the handle must resolve names there: create it with
   * `connection: { search_path: schema }` (or set the role's `search_path`); a handle that resolves
   * them elsewhere is refused after migrating, naming the fix. Default: the handle's current schema.
   */
  schema?: string;
}

/** The schema the packages' own composition uses when the host names none: never `public`. */
export const DEFAULT_SCHEMA = "openwork_remote_sessions";
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// One lock for every namespace: concurrent creations of the bookkeeping table would otherwise
// race between packages migrating at the same time.
const MIGRATION_LOCK = 4_711_820_231;
/** PostgreSQL 15: the oldest server the SQL is written and tested for. */
const OLDEST_SERVER = 150_000;

/** Reads the `NNNN_*.sql` files of a folder, in name order (for hosts that run the shipped files themselves). */
export async function loadMigrations(directory: URL): Promise<Migration[]> {
  const names = (await readdir(directory)).filter((name) => /^\d{4}_.+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(new URL(name, directory), "utf8");
      const breaking = /^-- breaking: (.+)$/m.exec(sql)?.[1]?.trim();
      return { name, sql, ...(breaking ? { breaking } : {}) };
    }),
  );
}

/**
 * Applies the migrations of `namespace` that the database has not seen, each in its own
 * transaction, all under one advisory lock held on a reserved connection, so several gateway
 * replicas may start at once. Refuses a server older than PostgreSQL 15 and a database that has
 * migrations this code does not know (it is newer than the code), before changing anything.
 */
export async function runMigrations(sql: Sql, options: MigrationOptions): Promise<{ applied: string[] }> {
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new Error(`${options.namespace}: schema ${JSON.stringify(options.schema)} is not a plain lower-case PostgreSQL name (a-z, 0-9, _; at most 63)`);
  }
  // Guarded: a PostgreSQL restart during start-up fails the migration with an error, never the
  // process (stock postgres.js 3.4.9 writes to a reserved connection it already dropped).
  const connection = await guardedReserve(sql);
  let schema: string;
  try {
    const [{ version } = { version: 0 }] = await connection<{ version: number }[]>`select current_setting('server_version_num')::int as version`;
    if (version < OLDEST_SERVER) {
      throw new Error(`${options.namespace}: PostgreSQL ${Math.floor(version / 10_000)} is too old; remote sessions need PostgreSQL 15 or later`);
    }
    await connection`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      schema = options.schema ?? (await currentSchema(connection, options.namespace));
      const applied = await applyPending(connection, options.namespace, options.migrations, schema);
      // On the reserved connection (a pool of one would wait for itself): `set local` has ended, so it resolves as the pool's do.
      await expectResolvedIn(connection, options.namespace, schema);
      return applied;
    } finally {
      await connection`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    connection.release();
  }
}

async function currentSchema(sql: ReservedSql, namespace: string): Promise<string> {
  const [row] = await sql<{ schema: string | null }[]>`select current_schema() as schema`;
  if (!row?.schema) throw new Error(`${namespace}: this handle's search_path names no existing schema; name one (the schema option)`);
  return row.schema;
}

/**
 * The queries name tables unqualified: a handle that resolves them in another schema would find
 * no tables (or, worse, someone else's), so it is refused here, once, with the fix.
 */
async function expectResolvedIn(sql: ReservedSql, namespace: string, schema: string): Promise<void> {
  const [row] = await sql<{ schema: string | null }[]>`select current_schema() as schema`;
  if (row?.schema === schema) return;
  throw new Error(
    `${namespace}: the tables are in schema "${schema}" but this handle resolves names in ${row?.schema ? `"${row.schema}"` : "no schema"}; ` +
      `create it with postgres(url, { connection: { search_path: "${schema}" } }) or run "alter role … set search_path = ${schema}"`,
  );
}

async function applyPending(sql: ReservedSql, namespace: string, migrations: readonly Migration[], schema: string): Promise<{ applied: string[] }> {
  // Created only when missing, rather than `if not exists`: that form sends a NOTICE on every
  // start, which postgres.js prints to the host's stdout unless the host silenced notices.
  const [found] = await sql<{ schema: boolean; bookkeeping: boolean }[]>`
    select exists (select from pg_namespace where nspname = ${schema}) as schema,
      to_regclass(${`"${schema.replaceAll('"', '""')}".openwork_migrations`}) is not null as bookkeeping`;
  if (!found?.schema) await sql`create schema ${sql(schema)}`;
  const bookkeeping = sql(`${schema}.openwork_migrations`);
  if (!found?.bookkeeping) {
    await sql`
      create table ${bookkeeping} (
        namespace text not null,
        name text not null,
        applied_at timestamptz not null default now(),
        primary key (namespace, name)
      )`;
  }
  const rows = await sql<{ name: string }[]>`select name from ${bookkeeping} where namespace = ${namespace}`;
  const known = new Set(migrations.map((m) => m.name));
  const unknown = rows.map((r) => r.name).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(`${namespace}: the database has migrations this code does not know (${unknown.join(", ")}); it is newer than the code`);
  }
  const done = new Set(rows.map((r) => r.name));
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.name)) continue;
    // A reserved connection has no begin(): the transaction is spelled out on it. The local
    // settings put the migration's unqualified names into the schema and keep its NOTICEs ("does
    // not exist, skipping") off the host's stdout; they end with the transaction, so the
    // connection goes back to the pool as it came.
    await sql.unsafe("begin");
    try {
      await sql`select set_config('search_path', ${`"${schema.replaceAll('"', '""')}"`}, true), set_config('client_min_messages', 'warning', true)`;
      await sql.unsafe(migration.sql);
      await sql`insert into ${bookkeeping} (namespace, name) values (${namespace}, ${migration.name})`;
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
export async function migrate(sql: Sql, options: { schema?: string } = {}): Promise<{ applied: string[] }> {
  return runMigrations(sql, { namespace: "remote-session-core", migrations: MIGRATIONS, ...options });
}
