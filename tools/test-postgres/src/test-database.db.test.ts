import { describe, expect, it } from "vitest";
import { createTestDatabase, useTestDatabase } from "./index.js";

const db = useTestDatabase();

describe("the test database", () => {
  it("is a real, empty PostgreSQL database of its own", async () => {
    const [row] = await db.current.sql<{ version: string; tables: number }[]>`
      select current_setting('server_version_num')::int as version,
             (select count(*)::int from pg_tables where schemaname = 'public') as tables`;
    expect(Number(row?.version)).toBeGreaterThanOrEqual(150000);
    expect(row?.tables).toBe(0);
  });

  it("carries LISTEN/NOTIFY across connections", async () => {
    const received = new Promise<string>((resolve) => {
      void db.current.sql.listen("hint", (payload) => resolve(payload));
    });
    // listen() resolves once LISTEN ran; give it a moment through a round trip on the pool
    await db.current.sql`select 1`;
    await new Promise((r) => setTimeout(r, 50));
    await db.current.sql`select pg_notify('hint', 'task_1')`;
    await expect(received).resolves.toBe("task_1");
  });

  it("gives concurrent SKIP LOCKED claims distinct rows", async () => {
    const { sql } = db.current;
    await sql`create table jobs (id int primary key, taken boolean not null default false)`;
    await sql`insert into jobs select g from generate_series(1, 8) g`;
    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        sql.begin(async (tx) => {
          const [job] = await tx<{ id: number }[]>`
            select id from jobs where not taken order by id limit 1 for update skip locked`;
          if (!job) return null;
          await tx`update jobs set taken = true where id = ${job.id}`;
          await tx`select pg_sleep(0.05)`;
          return job.id;
        }),
      ),
    );
    expect(new Set(claims).size).toBe(8);
  });

  it("drops a database with its connections", async () => {
    const other = await createTestDatabase();
    const name = new URL(other.url).pathname.slice(1);
    await other.drop();
    const [row] = await db.current.sql<{ n: number }[]>`
      select count(*)::int as n from pg_database where datname = ${name}`;
    expect(row?.n).toBe(0);
  });
});
