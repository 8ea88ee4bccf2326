import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionFailure } from "../errors/session-error.js";
import { migrate, runMigrations } from "../migrate.js";
import { takeRateLimit } from "../guards/rate-limit.js";
import { createSessionLedger } from "./session-ledger.js";

const db = useTestDatabase();
const alice = { organizationId: "org_1", userId: "user_alice" };
const bob = { organizationId: "org_1", userId: "user_bob" };
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error.error : error);

beforeAll(async () => {
  // Several replicas starting at once.
  const results = await Promise.all([1, 2, 3, 4].map(() => migrate(db.current.sql)));
  expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
});

describe("migrations", () => {
  it("apply once and refuse a database newer than the code", async () => {
    expect((await migrate(db.current.sql)).applied).toEqual([]);
    await db.current.sql`insert into openwork_migrations (namespace, name) values ('remote-session-core', '9999_future.sql')`;
    await expect(migrate(db.current.sql)).rejects.toThrow(/newer than the code/);
    await db.current.sql`delete from openwork_migrations where name = '9999_future.sql'`;
  });

  it("runs each migration in its own transaction: a failing one leaves nothing, the ones before it stay", async () => {
    const broken = [
      { name: "0001_ok.sql", sql: "create table half_done (id int)" },
      { name: "0002_bad.sql", sql: "create table bad_half (id int); select nope" },
    ];
    await expect(runMigrations(db.current.sql, { namespace: "broken", migrations: broken })).rejects.toThrow();
    const [row] = await db.current.sql`select to_regclass('half_done') as done, to_regclass('bad_half') as bad`;
    expect(row).toEqual({ done: "half_done", bad: null });
    const fixed = [broken[0]!, { name: "0002_bad.sql", sql: "create table bad_half (id int)" }];
    expect(await runMigrations(db.current.sql, { namespace: "broken", migrations: fixed })).toEqual({ applied: ["0002_bad.sql"] });
  });

  it("ships the SQL files embedded, exactly as they are", async () => {
    const { renderMigrations } = (await import(new URL("../../../../scripts/embed-sql.mjs", import.meta.url).href)) as {
      renderMigrations(folder: string, typeModule: string): string;
    };
    const generated = await readFile(new URL("../sql-migrations.generated.ts", import.meta.url), "utf8");
    expect(generated).toBe(renderMigrations(fileURLToPath(new URL("../../sql/", import.meta.url)), "./migrate.js"));
  });
});

describe("session ledger", () => {
  it("keeps sessions member-scoped: another member's id reads as unknown", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const session = await ledger.insert(alice, { target: "desktop", title: "Mine", state: "queued" });
    expect(session.id).toMatch(/^rs_/);
    expect((await ledger.find(alice, session.id))?.title).toBe("Mine");
    expect(await ledger.find(bob, session.id)).toBeNull();
    expect(await ledger.find({ ...alice, organizationId: "org_2" }, session.id)).toBeNull();
  });

  it("fails a required update inside PostgreSQL, so a COMMIT sent behind it rolls the transaction back", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const session = await ledger.insert(alice, { target: "desktop", title: "Required", state: "queued" });
    await ledger.require(session, { state: "running" }, "never refused");
    expect((await ledger.find(alice, session.id))?.state).toBe("running");
    const reserved = await db.current.sql.reserve();
    try {
      const inTx = createSessionLedger(reserved);
      const steps = await Promise.allSettled([
        reserved`begin`.execute(),
        inTx.require(session, { lastError: { error: "runner_unavailable", message: "kept only with the move" } }, "never refused"),
        inTx.require(session, { state: "idle", expect: "queued" }, "the session was not queued"),
        reserved`commit`.execute(),
      ]);
      expect(steps.map((step) => step.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect((steps[2] as PromiseRejectedResult).reason).toMatchObject({ code: "P0001", message: "the session was not queued" });
      expect((steps[3] as PromiseFulfilledResult<{ command: string }>).value.command).toBe("ROLLBACK");
    } finally {
      reserved.release();
    }
    expect(await ledger.find(alice, session.id)).toMatchObject({ state: "running", lastError: null });
  });

  it("moves state only along the transition table", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const session = await ledger.insert(alice, { target: "desktop", title: "t", state: "queued" });
    expect((await ledger.update(session, { state: "expired" }))?.state).toBe("expired");
    expect(await ledger.update(session, { state: "running" })).toBeNull();
    const updated = await ledger.update(session, { lastError: { error: "runner_unavailable", message: "no runner" }, targetRef: { runnerId: "r1" } });
    expect(updated).toMatchObject({ state: "expired", lastError: { error: "runner_unavailable" }, targetRef: { runnerId: "r1" } });
    expect((await ledger.update(session, { lastError: null }))?.lastError).toBeNull();
  });

  it("adds reported steps to a session's spend, and raises it to a target's totals without ever lowering it", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const session = await ledger.insert(alice, { target: "desktop", title: "spends", state: "running" });
    expect(session.spend).toEqual({ tokens: 0, tokensIn: 0, tokensOut: 0, costUsd: null, runningMs: 0, usage: "unreported" });
    await ledger.update(session, { spent: { tokensIn: 5, tokensOut: 1 } });
    // An unpriced step leaves the cost unknown; a priced one adds to it.
    expect((await ledger.update(session, { spent: { tokensIn: 1, tokensOut: 1, costMicros: 250 } }))?.spend).toEqual({
      tokens: 8,
      tokensIn: 6,
      tokensOut: 2,
      costUsd: 0.00025,
      runningMs: 0,
      usage: "reported",
    });
    // A worker's totals (a cloud session's messages): column by column, never below what was had.
    const raised = await ledger.update(session, { spentAtLeast: { tokensIn: 4, tokensOut: 9, costMicros: 100, runningMs: 70, reported: true } });
    expect(raised?.spend).toEqual({ tokens: 15, tokensIn: 6, tokensOut: 9, costUsd: 0.00025, runningMs: 70, usage: "reported" });
    // Time alone reports no usage.
    const timed = await ledger.insert(alice, { target: "cloud", title: "timed", state: "running" });
    expect((await ledger.update(timed, { spent: { runningMs: 30 } }))?.spend).toMatchObject({ runningMs: 30, usage: "unreported" });
  });

  it("lists newest first and pages without skipping or repeating, even within one millisecond", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const member = { organizationId: "org_1", userId: "user_lister" };
    const made = [];
    for (let i = 0; i < 25; i++) made.push(await ledger.insert(member, { target: i % 2 ? "cloud" : "desktop", title: `s${i}`, state: "idle" }));
    await db.current.sql`update remote_session set created_at = date_trunc('milliseconds', now()) where user_id = 'user_lister' and title < 's2'`;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ledger.list(member, { limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    const cloud = await ledger.list(member, { target: "cloud", limit: 50 });
    expect(cloud.sessions).toHaveLength(12);
    await expect(ledger.list(member, { limit: 5, cursor: "nope" }).catch(codeOf)).resolves.toBe("invalid_capability_arguments");
  });
});

describe("idempotency", () => {
  it("returns the original result for the same key and arguments, and refuses other arguments", async () => {
    const ledger = createSessionLedger(db.current.sql);
    let runs = 0;
    const call = (args: unknown) => ledger.idempotent(alice, { operation: "create", key: "k-1", args }, async () => ({ sessionId: `rs_${++runs}` }));
    expect(await call({ title: "a" })).toEqual({ result: { sessionId: "rs_1" }, replayed: false });
    expect(await call({ title: "a" })).toEqual({ result: { sessionId: "rs_1" }, replayed: true });
    await expect(call({ title: "b" }).catch(codeOf)).resolves.toBe("remote_session_idempotency_conflict");
    // The same key of another member is another key.
    const other = await ledger.idempotent(bob, { operation: "create", key: "k-1", args: { title: "b" } }, async () => "bob's");
    expect(other).toEqual({ result: "bob's", replayed: false });
    expect(runs).toBe(1);
  });

  it("settles concurrent duplicates through the unique key: one run, one result", async () => {
    const ledger = createSessionLedger(db.current.sql);
    let runs = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        ledger.idempotent(alice, { operation: "send", key: "k-race", args: { p: 1 } }, async () => {
          runs++;
          await new Promise((resolve) => setTimeout(resolve, 100));
          return { messageId: "msg_1" };
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(results.every((r) => (r.result as { messageId: string }).messageId === "msg_1")).toBe(true);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it("wakes waiting duplicates by notification, not by their polling", async () => {
    const ledger = createSessionLedger(db.current.sql);
    let finishedAt = 0;
    const settledAt: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        await ledger.idempotent(alice, { operation: "create", key: "k-notify", args: { n: 1 } }, async () => {
          // Long enough that the waiters' backoff has grown to its 1 s pauses (looks at 0.75 s, then 1.55 s).
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          finishedAt = performance.now();
          return "done";
        });
        settledAt.push(performance.now());
      }),
    );
    const lag = Math.max(...settledAt) - finishedAt;
    expect(lag).toBeLessThan(300);
  });

  it("lets a retry run again after a failure, with the values the first attempt reserved", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const request = { operation: "send" as const, key: "k-fail", args: {} };
    let n = 0;
    const reserve = () => ({ messageId: `msg_${++n}` });
    const seen: unknown[] = [];
    await expect(
      ledger.idempotent(alice, request, async (reserved) => (seen.push(reserved), Promise.reject(new Error("worker asleep"))), { reserve }),
    ).rejects.toThrow("worker asleep");
    const retried = await ledger.idempotent(alice, request, async (reserved) => (seen.push(reserved), "ok"), { reserve });
    expect(retried).toEqual({ result: "ok", replayed: false });
    expect(seen).toEqual([{ messageId: "msg_1" }, { messageId: "msg_1" }]);
  });

  it("never stores the arguments or the key themselves", async () => {
    const ledger = createSessionLedger(db.current.sql);
    await ledger.idempotent(alice, { operation: "send", key: "secret-key", args: { prompt: "top secret prompt" } }, async () => "ok");
    const rows = await db.current.sql`select * from remote_session_idempotency`;
    expect(JSON.stringify(rows)).not.toMatch(/secret/);
  });
});

describe("create rate limit", () => {
  it("allows 32 creates a minute per member, then answers rate_limited with retryAfterMs", async () => {
    const member = { organizationId: "org_1", userId: "user_busy" };
    for (let i = 0; i < 32; i++) await takeRateLimit(db.current.sql, member);
    const error = await takeRateLimit(db.current.sql, member).catch((e: unknown) => e);
    expect(SessionFailure.isInstance(error) && error.error).toMatchObject({ error: "rate_limited", retryable: true });
    const retryAfterMs = SessionFailure.isInstance(error) ? error.error.retryAfterMs : undefined;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    await expect(takeRateLimit(db.current.sql, { ...member, userId: "user_calm" })).resolves.toBeUndefined();
  });

  it("costs one statement a hit, and the first hit of a window sweeps the member's old windows of that bucket", async () => {
    const member = { organizationId: "org_1", userId: "user_sweeping" };
    const old = new Date(Date.now() - 3_600_000);
    await db.current.sql`
      insert into remote_session_rate_window (organization_id, user_id, bucket, window_start, hits)
      values ('org_1', 'user_sweeping', 'create', ${old}, 3), ('org_1', 'user_sweeping', 'send', ${old}, 3),
             ('org_1', 'user_other', 'create', ${old}, 3)`;
    let statements = 0;
    const counting = new Proxy(db.current.sql, {
      apply: (target, self, args) => (statements++, Reflect.apply(target, self, args)),
    });
    await takeRateLimit(counting, member);
    await takeRateLimit(counting, member);
    expect(statements).toBe(2);
    // Summed: the two hits may straddle a window's edge.
    const left = await db.current.sql`
      select user_id, bucket, sum(hits)::int as hits, bool_or(window_start = ${old}) as kept_old from remote_session_rate_window
      where user_id in ('user_sweeping', 'user_other') group by user_id, bucket order by user_id, bucket`;
    expect(left.map((r) => [r.user_id, r.bucket, r.hits, r.kept_old])).toEqual([
      ["user_other", "create", 3, true],
      ["user_sweeping", "create", 2, false],
      ["user_sweeping", "send", 3, true],
    ]);
  });
});
