import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHintPublisher } from "../wake/hints.js";
import { postgresWakeBus } from "../wake/wake-bus.js";
import { pipeline } from "./pipeline.js";
import { transaction } from "./transaction.js";

const db = useTestDatabase();
let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 1, onnotice: () => {} });
  await sql`create table if not exists transaction_probe (n int not null)`;
});
afterAll(async () => {
  await sql.end({ timeout: 5 });
});

/** A transaction scope whose publisher counts what it sent, and the rows its probe holds. */
function scope() {
  const publisher = createHintPublisher(postgresWakeBus({ sql }));
  return { scope: { sql, publisher }, published: () => publisher.stats().published };
}
const probe = async (n: number) => (await sql<{ count: number }[]>`select count(*)::int as count from transaction_probe where n = ${n}`)[0]!.count;

describe("transaction with its COMMIT sent by its callback", () => {
  it("commits the statements sent with it and publishes the hints once it committed", async () => {
    const { scope: s, published } = scope();
    await transaction(s, async (tx, hints, commit) => {
      hints.session("org_tx", "rs_committed");
      await pipeline([tx`insert into transaction_probe values (1)`.execute(), commit()]);
    });
    expect(await probe(1)).toBe(1);
    await vi.waitFor(() => expect(published()).toBe(1));
  });

  it("rolls back when a statement before the COMMIT fails: nothing is kept, that statement's error is thrown, no hint leaves", async () => {
    const { scope: s, published } = scope();
    const failed = transaction(s, async (tx, hints, commit) => {
      hints.session("org_tx", "rs_rolled_back");
      await pipeline([tx`insert into transaction_probe values (2)`.execute(), tx`select 1 / 0`.execute(), commit()]);
    });
    await expect(failed).rejects.toMatchObject({ code: "22012" });
    expect(await probe(2)).toBe(0);
    // The connection is clean again: the next transaction on it commits.
    await transaction(s, async (tx) => tx`insert into transaction_probe values (3)`);
    expect(await probe(3)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(published()).toBe(0);
  });

  it("keeps and announces what committed when its callback fails after the COMMIT, and throws that failure", async () => {
    const { scope: s, published } = scope();
    const late = transaction(s, async (tx, hints, commit) => {
      hints.session("org_tx", "rs_late");
      await pipeline([tx`insert into transaction_probe values (4)`.execute(), commit()]);
      throw new Error("failed after its commit");
    });
    await expect(late).rejects.toThrow("failed after its commit");
    expect(await probe(4)).toBe(1);
    await vi.waitFor(() => expect(published()).toBe(1));
  });
});
