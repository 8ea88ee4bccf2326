import { loadMigrations, migrate as migrateLedger, runMigrations } from "@openwork/remote-session-core";
import type { Sql } from "postgres";

/** The folder of this package's SQL files (shipped in the package for other migration tools). */
export const DESKTOP_TARGET_SQL_DIRECTORY = new URL("../sql/", import.meta.url);

/**
 * Creates or updates the session ledger and the desktop target's tables, in that order, under
 * an advisory lock. Safe to call from every replica at start-up.
 */
export async function migrateDesktopTarget(sql: Sql): Promise<{ applied: string[] }> {
  const ledger = await migrateLedger(sql);
  const own = await runMigrations(sql, {
    namespace: "desktop-target",
    migrations: await loadMigrations(DESKTOP_TARGET_SQL_DIRECTORY),
  });
  return { applied: [...ledger.applied, ...own.applied] };
}
