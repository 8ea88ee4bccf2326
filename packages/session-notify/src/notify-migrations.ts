import { runMigrations } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/**
 * Creates or updates the notification tables (`notify_channel`, `notify_event`, `notify_delivery`)
 * under the migrations' advisory lock; safe from every replica at start-up. `schema`: where the
 * tables go (see `runMigrations`; default the handle's current schema).
 */
export function migrateSessionNotify(sql: Sql, options: { schema?: string } = {}): Promise<{ applied: string[] }> {
  return runMigrations(sql, { namespace: "session-notify", migrations: MIGRATIONS, ...options });
}
