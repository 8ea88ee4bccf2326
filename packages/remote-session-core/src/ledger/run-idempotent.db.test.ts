import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, expect, it } from "vitest";
import { migrate } from "../migrate.js";
import type { Queryable } from "../queryable.js";
import { runIdempotent } from "./run-idempotent.js";

const db = useTestDatabase();
beforeAll(() => migrate(db.current.sql));

/** The same client, except that while `down` every statement it is handed fails, as with PostgreSQL gone. */
function outageOf(sql: Queryable) {
  const state = { down: false };
  const statement = (...args: Parameters<Queryable>) => (state.down ? Promise.reject(new Error("connection lost")) : sql(...args));
  return { state, sql: Object.assign(statement, sql) as unknown as Queryable };
}

it("a retry once the database is back takes over an attempt that died with it, within seconds, not after the claim goes stale", async () => {
  const scope = { organizationId: "org_idem_outage", userId: "user_idem_outage" };
  const request = { operation: "create" as const, key: "outage-key", args: { prompt: "once" } };
  const outage = outageOf(db.current.sql);
  // The attempt fails because the database went away, and so does the mark that frees its key.
  const died = runIdempotent(outage.sql, scope, request, async () => {
    outage.state.down = true;
    throw new Error("the attempt's connection was lost");
  });
  await expect(died).rejects.toThrow("the attempt's connection was lost");
  setTimeout(() => (outage.state.down = false), 300);
  const started = Date.now();
  // Waits at most 10 s: before, the key stayed pending until it went stale (120 s), so this answered idempotency_in_progress.
  const retried = await runIdempotent(db.current.sql, scope, request, async () => "finished", { waitMs: 10_000 });
  expect(retried).toEqual({ result: "finished", replayed: false });
  expect(Date.now() - started).toBeLessThan(5_000);
});
