import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { expect, it } from "vitest";
import { guardedReserve } from "@openwork/remote-session-core";
import { isConnectionLost, ReservedConnectionLost, ReserveTimedOut } from "@openwork/remote-session-core/internal";
import { createHintPublisher } from "../wake/hints.js";
import { postgresWakeBus } from "../wake/wake-bus.js";
import { transaction } from "./transaction.js";

// The workspace's postgres.js is patched, so a write to a dead connection settles here instead of
// ending the process (tools/consumers proves the process survives on the stock one); what these
// show is that the guard never writes to it at all, and never hands it back to the pool.
const db = useTestDatabase();

// biome-ignore lint/complexity/noBannedTypes: postgres.js's own type parameter for a client without custom types
const handle = (options: postgres.Options<{}> = {}) => postgres(db.current.url, { max: 2, onnotice: () => {}, ...options });

it("sends nothing more on a reserved connection once a statement of it found the connection lost, and leaves it to the pool", async () => {
  const sql = handle();
  const killer = handle({ max: 1 });
  try {
    const reserved = await guardedReserve(sql);
    const [row] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await killer`select pg_terminate_backend(${row!.pid})`;
    const first = await reserved`select 1`.catch((error: unknown) => error);
    expect(isConnectionLost(first)).toBe(true);
    // Not sent: the guard's own error, whose cause is the first one.
    const second = await reserved`select 2`.catch((error: unknown) => error);
    expect(second).toBeInstanceOf(ReservedConnectionLost);
    expect((second as ReservedConnectionLost).cause).toBe(first);
    await expect(reserved`select 3`.execute()).rejects.toBeInstanceOf(ReservedConnectionLost);
    reserved.release();
    // The pool is whole: both connections serve, the killed one reconnected. postgres.js hands the
    // killed backend's 57P01 to the first query of the reconnected connection (porsager/postgres#1223).
    await Promise.allSettled([sql`select 1 as n`, sql`select 2 as n`]);
    expect(await Promise.all([sql`select 1 as n`, sql`select 2 as n`])).toHaveLength(2);
    const again = await guardedReserve(sql);
    expect((await again`select 4 as n`)[0]!.n).toBe(4);
    again.release();
  } finally {
    await Promise.all([sql.end({ timeout: 5 }), killer.end({ timeout: 5 })]);
  }
});

it("a statement error that leaves the connection alive does not count: the transaction rolls back and the connection serves again", async () => {
  const sql = handle({ max: 1 });
  try {
    await expect(transaction({ sql, publisher: createHintPublisher(postgresWakeBus({ sql })) }, async (tx) => tx`select 1 / 0`)).rejects.toMatchObject({
      code: "22012",
    });
    expect(isConnectionLost(Object.assign(new Error("division by zero"), { code: "22012", severity: "ERROR" }))).toBe(false);
    expect((await sql`select current_setting('transaction_isolation') as level, 5 as n`)[0]!.n).toBe(5);
  } finally {
    await sql.end({ timeout: 5 });
  }
});

it("gives up a reserve after the handle's connect_timeout, and releases the connection that comes after all", async () => {
  const sql = handle({ max: 1, connect_timeout: 1 });
  try {
    const holder = await guardedReserve(sql);
    const waited = await guardedReserve(sql).catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(ReserveTimedOut);
    expect((waited as ReserveTimedOut).code).toBe("CONNECT_TIMEOUT");
    holder.release();
    // The late reserve got the one connection and gave it back: the pool still serves.
    expect((await sql`select 6 as n`)[0]!.n).toBe(6);
    const next = await guardedReserve(sql);
    next.release();
  } finally {
    await sql.end({ timeout: 5 });
  }
});
