import { dumpMigrations, useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { runMigrations } from "./migrate.js";
import { MIGRATIONS } from "./sql-migrations.generated.js";

const db = useTestDatabase();

// The committed dump (`npm run schema:dump` rewrites it) is what the migrations make, each one's effect included.
it("the committed schema dump is current", async () => {
  const dump = await dumpMigrations({
    url: db.current.url,
    title: "@openwork/remote-session-core",
    namespace: "remote-session-core",
    migrations: MIGRATIONS,
    runMigrations,
  });
  await expect(dump).toMatchFileSnapshot("../schema.md");
});
