import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "./sql-migrations.generated.js";
import { migrate, runMigrations } from "./migrate.js";
import { createSessionLedger } from "./ledger/session-ledger.js";

const db = useTestDatabase();
const scope = { organizationId: "org_1", userId: "user_alice" };

/** A second handle on the test database whose unqualified names resolve in `schema`. */
const handleIn = (schema: string) => postgres(db.current.url, { max: 2, onnotice: () => {}, connection: { search_path: schema } });

const tablesIn = async (schema: string) =>
  (await db.current.sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = ${schema} order by 1`).map(
    (r) => r.name,
  );

describe("the host chooses the schema", () => {
  it("puts the tables and their bookkeeping into the named schema, and the ledger works through a handle that resolves there", async () => {
    const sql = handleIn("team_a");
    try {
      expect((await migrate(sql, { schema: "team_a" })).applied).toEqual(MIGRATIONS.map((m) => m.name));
      expect(await tablesIn("team_a")).toEqual(["openwork_migrations", "remote_session", "remote_session_idempotency", "remote_session_rate_window"]);
      expect(await tablesIn("public")).toEqual([]);
      const ledger = createSessionLedger(sql);
      const created = await ledger.insert(scope, { target: "desktop", title: "in team_a", state: "queued" });
      expect((await ledger.find(scope, created.id))?.title).toBe("in team_a");
    } finally {
      await sql.end();
    }
  });

  it("keeps two schemas of one database apart: each migrates on its own and sees only its own rows", async () => {
    const [a, b] = [handleIn("team_b1"), handleIn("team_b2")];
    try {
      await migrate(a, { schema: "team_b1" });
      expect((await migrate(b, { schema: "team_b2" })).applied).toHaveLength(MIGRATIONS.length);
      const session = await createSessionLedger(a).insert(scope, { target: "desktop", title: "only in b1", state: "queued" });
      expect(await createSessionLedger(b).find(scope, session.id)).toBeNull();
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it("refuses, after migrating, a handle that resolves names elsewhere, naming the fix", async () => {
    await expect(migrate(db.current.sql, { schema: "team_c" })).rejects.toThrow(
      'the tables are in schema "team_c" but this handle resolves names in "public"; create it with postgres(url, { connection: { search_path: "team_c" } })',
    );
    // The schema is ready: a handle made as the message says works at once.
    const sql = handleIn("team_c");
    try {
      expect((await migrate(sql, { schema: "team_c" })).applied).toEqual([]);
    } finally {
      await sql.end();
    }
  });

  it("refuses a schema name that is not a plain lower-case name before touching the database", async () => {
    for (const schema of ["Team", "a-b", 'x"; drop schema public; --', "", "a".repeat(64)]) {
      await expect(runMigrations(db.current.sql, { namespace: "n", migrations: [], schema })).rejects.toThrow(/is not a plain lower-case PostgreSQL name/);
    }
    const [row] = await db.current
      .sql`select count(*)::int as n from information_schema.schemata where schema_name not in ('public', 'team_a', 'team_b1', 'team_b2', 'team_c', 'team_e') and schema_name not like 'pg_%' and schema_name <> 'information_schema'`;
    expect(row?.n).toBe(0);
  });

  it("prints nothing on the host's stdout: no NOTICE on a first migration or on every later start", async () => {
    const notices: unknown[] = [];
    const sql = postgres(db.current.url, { max: 2, onnotice: (notice) => void notices.push(notice), connection: { search_path: "team_e" } });
    try {
      await migrate(sql, { schema: "team_e" });
      await migrate(sql, { schema: "team_e" });
      expect(notices).toEqual([]);
    } finally {
      await sql.end();
    }
  });

  it("without a schema, uses the handle's own, as before", async () => {
    const sql = handleIn("team_d,public");
    try {
      // team_d does not exist: the current schema is public.
      await runMigrations(sql, { namespace: "plain", migrations: [{ name: "0001_t.sql", sql: "create table plain_t (id int)" }] });
      expect(await tablesIn("public")).toContain("plain_t");
    } finally {
      await sql.end();
    }
  });
});
