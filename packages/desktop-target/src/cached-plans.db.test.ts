import { migrate } from "@openwork/remote-session-core";
import { replannedFunctions, useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, expect, it } from "vitest";
import { migrateDesktopTarget } from "./migrate-desktop-target.js";

const db = useTestDatabase();

beforeAll(async () => {
  await migrate(db.current.sql);
  await migrateDesktopTarget(db.current.sql);
});

// The lock-and-read of every runner request calls these: as SQL functions they cost a completion
// ~1 ms of the backend's time on PostgreSQL 15, most of it planning them again.
it("has no function PostgreSQL before 18 plans again at every call", async () => {
  const [{ count }] = await db.current.sql<[{ count: number }]>`
    select count(*)::int as count from pg_proc where pronamespace = current_schema()::regnamespace and starts_with(proname, 'desktop_')`;
  expect(count).toBeGreaterThanOrEqual(4);
  expect(await replannedFunctions(db.current.sql, "desktop_")).toEqual([]);
});
