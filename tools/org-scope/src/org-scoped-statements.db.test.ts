import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import "@openwork/test-postgres";
import { expect, inject, it } from "vitest";
import { patternOf, type SqlTemplate, templatesIn } from "./sql-templates.js";

// Every table sharded by organization_id (Citus: create_distributed_table(..., 'organization_id')).
const TABLES = [
  "remote_session",
  "remote_session_idempotency",
  "remote_session_rate_window",
  "desktop_runner",
  "desktop_task",
  "desktop_task_event",
  "desktop_wake",
  "mcp_session",
  "mcp_subscription",
  "mcp_push_event",
  "notify_channel",
  "notify_event",
  "notify_delivery",
  "notify_waiting",
  // notify_answer_link is not among them: a link is opened by its token, which names no
  // organization, so it is keyed by its random id alone (a reference table, not a sharded one).
];
const TOUCHES_TABLE = new RegExp(`\\b(?:${TABLES.join("|")})\\b`, "i");
// Sweeps and retention span every organization by design; each says so in its text.
const ACROSS_ORGANIZATIONS = "/* across organizations:";
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The SQL templates of the packages and the gateway that touch the sharded tables (tests and test helpers excluded). */
async function librarySql(): Promise<SqlTemplate[]> {
  const templates: SqlTemplate[] = [];
  for (const area of ["packages", "apps"]) {
    for (const entry of await readdir(join(ROOT, area), { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      const local = relative(ROOT, path);
      if (!entry.isFile() || !local.endsWith(".ts") || !local.includes("/src/")) continue;
      if (/\.test\.ts$|\/testing\/|generated|node_modules|\/dist\//.test(local)) continue;
      templates.push(...templatesIn(local, await readFile(path, "utf8")).filter((t) => TOUCHES_TABLE.test(t.parts.join(" "))));
    }
  }
  return templates;
}

it("finds no statement the packages sent over a sharded table without its organization", async () => {
  const admin = postgres(inject("testDatabaseUrl"), { max: 1, onnotice: () => {} });
  try {
    await admin`create extension if not exists pg_stat_statements`.catch(() => {});
    const [loaded] = await admin<{ ok: boolean }[]>`select exists (select 1 from pg_extension where extname = 'pg_stat_statements') as ok`;
    expect(loaded?.ok, "pg_stat_statements is not available on this server (shared_preload_libraries)").toBe(true);
    const statements = await admin<{ query: string; calls: number }[]>`
      select query, sum(calls)::int as calls from pg_stat_statements
      where dbid > ${inject("testDatabasesAfter")} group by query`;
    const templates = (await librarySql()).map((template) => ({ template, pattern: patternOf(template) }));
    const matched = new Set<SqlTemplate>();
    const unscoped: string[] = [];
    for (const { query } of statements) {
      if (!TOUCHES_TABLE.test(query)) continue;
      const from = templates.filter(({ pattern }) => pattern.test(query));
      if (from.length === 0) continue; // a test's own look at the rows
      for (const { template } of from) matched.add(template);
      if (!/\borganization_id\b/i.test(query) && !query.includes(ACROSS_ORGANIZATIONS)) {
        unscoped.push(`${from.map(({ template }) => template.file).join(", ")}: ${query.replace(/\s+/g, " ").slice(0, 300)}`);
      }
    }
    expect(unscoped).toEqual([]);
    // The check saw the packages' statements: most of their SQL ran in this run's suites.
    console.log(`org-scope: ${matched.size} of ${templates.length} SQL templates of the packages seen in ${statements.length} statements`);
    expect(matched.size, "the check saw too few of the packages' statements: run it after the database suites (npm test)").toBeGreaterThan(
      templates.length / 2,
    );
  } finally {
    await admin.end();
  }
});
