import { runMigrations } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/**
 * Creates or updates the notification tables (`notify_channel`, `notify_event`, `notify_delivery`,
 * `notify_answer_link`, `notify_waiting`) and the trigger on the session ledger's `remote_session`
 * that enqueues its state changes, under the migrations' advisory lock; safe from every replica at
 * start-up. The ledger must be migrated first, into the same schema (`migrate` of
 * `@openwork/remote-session-core`, or a target's migrate that runs it): refused with an error
 * naming that otherwise, before anything is created. `schema`: where the tables go (see
 * `runMigrations`; default the handle's current schema).
 */
export async function migrateSessionNotify(sql: Sql, options: { schema?: string } = {}): Promise<{ applied: string[] }> {
  const [ledger] = await sql<{ schema: string | null; found: boolean }[]>`
    select coalesce(${options.schema ?? null}::text, current_schema()) as schema,
      coalesce(to_regclass(quote_ident(coalesce(${options.schema ?? null}::text, current_schema())) || '.remote_session') is not null, false) as found`;
  if (!ledger?.found) {
    throw new Error(
      `session-notify: the session ledger's table remote_session is not in schema ${ledger?.schema ? `"${ledger.schema}"` : "(none)"}; ` +
        "migrate it first, into the same schema (migrate() of @openwork/remote-session-core, or migrateDesktopTarget), then migrateSessionNotify",
    );
  }
  return runMigrations(sql, { namespace: "session-notify", migrations: MIGRATIONS, ...options });
}
