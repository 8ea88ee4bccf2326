import { runMigrations } from "@openwork/remote-session-core/internal";
import { dumpMigrations, useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { MIGRATIONS } from "./sql-migrations.generated.js";

const db = useTestDatabase();

// The committed dump (`npm run schema:dump` rewrites it) is what the push migrations make, each one's effect included.
it("the committed schema dump is current", async () => {
  const dump = await dumpMigrations({ url: db.current.url, title: "@openwork/session-push", namespace: "session-push", migrations: MIGRATIONS, runMigrations });
  await expect(dump).toMatchFileSnapshot("../schema.md");
});
