import { migrate } from "@openwork/remote-session-core";
import { runMigrations } from "@openwork/remote-session-core/internal";
import { dumpMigrations, useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { MIGRATIONS } from "./sql-migrations.generated.js";

const db = useTestDatabase();

// The committed dump (`npm run schema:dump` rewrites it) is what the migrations make over the
// session ledger's tables, each one's effect included.
it("the committed schema dump is current", async () => {
  const dump = await dumpMigrations({
    url: db.current.url,
    title: "@openwork/desktop-target",
    namespace: "desktop-target",
    migrations: MIGRATIONS,
    runMigrations,
    before: (sql, schema) => migrate(sql, { schema }),
  });
  await expect(dump).toMatchFileSnapshot("../schema.md");
});
