import { migrate as migrateLedger } from "@openwork/remote-session-core";
import { runMigrations } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/** The folder of this package's SQL files (shipped in the package for other migration tools). */
export const DESKTOP_TARGET_SQL_DIRECTORY = new URL("../sql/", import.meta.url);

/**
 * Creates or updates the session ledger and the desktop target's tables, in that order, under
 * an advisory lock. Safe to call from every replica at start-up. The SQL is embedded in the
 * module (built from `sql/*.sql`), so a bundled host needs no files. `schema`: see `runMigrations`.
 */
export async function migrateDesktopTarget(sql: Sql, options: { schema?: string } = {}): Promise<{ applied: string[] }> {
  const ledger = await migrateLedger(sql, options);
  const own = await runMigrations(sql, { namespace: "desktop-target", migrations: MIGRATIONS, ...options });
  return { applied: [...ledger.applied, ...own.applied] };
}
