import type { Sql } from "postgres";

/**
 * The functions of the connection's current schema named `prefix…` that PostgreSQL before 18
 * parses and plans again at every call: SQL-language ones, except an immutable one without a SET
 * clause (a case expression such as that is inlined into its caller's plan). A PL/pgSQL function
 * keeps its statements' plans for the connection.
 */
export async function replannedFunctions(sql: Sql, prefix: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select p.proname as name from pg_proc p join pg_language l on l.oid = p.prolang
    where p.pronamespace = current_schema()::regnamespace and starts_with(p.proname, ${prefix})
      and l.lanname = 'sql' and not (p.provolatile = 'i' and p.proconfig is null)
    order by 1`;
  return rows.map((row) => row.name);
}
