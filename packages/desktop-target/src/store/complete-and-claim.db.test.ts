import { createRunnerClient } from "@openwork/runner-protocol/client";
import { explainPlan, planNodes, useTestDatabase } from "@openwork/test-postgres";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";
import type { VerifiedRunner } from "./check-registration.js";
import { createRegistrationCache } from "../routes/registration-cache.js";
import { completeAndClaim } from "./complete-and-claim.js";
import { lockOwnTask, lockOwnTaskAndSession } from "./lock-own-task.js";
import { type DerivationTask, deriveSessionState, lockSession } from "./sync-session-state.js";

const db = useTestDatabase();
let gateway: RunnerGateway;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
});
afterAll(async () => {
  await gateway.close();
});

/**
 * A database handle that records the statements it sends, grouped by round trip: statements
 * built in one turn of the event loop leave in one write (postgres.js flushes on `setImmediate`);
 * the next ones can only be built once an answer has arrived, in a later turn.
 */
function countingSql() {
  const trips: string[][] = [];
  let open = false;
  const sql = postgres(db.current.url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, statement) => {
      if (!open) {
        trips.push([]);
        open = true;
        setImmediate(() => {
          open = false;
        });
      }
      trips.at(-1)!.push(statement);
    },
  });
  return { sql, trips };
}

/** Completes a runner's task with a final answer and asks for its next, straight through `completeAndClaim`. */
function completer(sql: Sql, ttlMs: number, member: { organizationId: string; memberId: string }, runnerId: string) {
  const scope = {
    sql,
    publisher: gateway.store.publisher,
    dialects: gateway.store.dialects,
    leaseMs: 60_000,
    turnEventBytes: 4 * 1024 * 1024,
    registrations: createRegistrationCache({ ttlMs }),
  };
  const verified: VerifiedRunner = {
    holder: { ...member, runnerId, mintedAt: Date.now() - 1000 },
    expiresAt: Date.now() + 3_600_000,
    dialect: gateway.store.dialects.of("desktop-runner"),
    tokenCapabilities: [],
  };
  // `events` last events (none: the body carries no events).
  return (taskId: string, events = 1) =>
    completeAndClaim(scope, verified, taskId, {
      attempt: 1,
      status: "done",
      localSessionId: `ses_${taskId.slice(-6)}`,
      ...(events > 0
        ? {
            events: Array.from({ length: events }, (_, i) => ({
              sequence: i + 1,
              type: "assistant.final" as const,
              payload: { messageId: `m${i}`, text: "answer" },
            })),
          }
        : {}),
      next: {},
    });
}

describe("completeAndClaim", () => {
  it.each([
    // BEGIN, the registration, the task's lock with its held events and its session's lock with
    // its turns | the session's move, the next claim carrying the events and the settled task
    // with its fold, COMMIT.
    { cache: "off", ttlMs: 0, trips: [3, 3], statements: 6 },
    // The registration read by the completion before, served from the cache: not read again.
    { cache: "1 s", ttlMs: 1_000, trips: [2, 3], statements: 5 },
  ])(
    "completes a turn with its last events and claims the runner's next task in 2 round trips and $statements statements (registration cache $cache)",
    async ({ ttlMs, trips, statements }) => {
      const member = { organizationId: "org_trips", memberId: `mem_trips_${ttlMs}_${Date.now()}` };
      const runnerId = "runner-trips-01";
      const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
      const call = gateway.call(member);
      for (const title of ["one", "two", "three"]) await gateway.sessions.create(call, { title, prompt: `question ${title}` });
      const first = await client.claimNext();
      const counting = countingSql();
      const complete = completer(counting.sql, ttlMs, member, runnerId);
      try {
        // The first completion prepares the statements (a first use is described before it runs).
        const second = await complete(first!.taskId);
        expect(second.next).toMatchObject({ kind: "claimed" });
        counting.trips.length = 0;
        const third = await complete(second.next!.task.id);
        expect(third).toMatchObject({ answer: { state: "done" }, next: { kind: "claimed" } });
        expect(counting.trips.map((trip) => trip.length)).toEqual(trips);
        expect(counting.trips.flat()).toHaveLength(statements);
        expect(counting.trips[0]![0]).toBe("begin");
        expect(counting.trips[0]!.at(-1)).toMatch(/desktop_lock_own_task[\s\S]*desktop_lock_session/);
        expect(counting.trips[1]![0]).toMatch(/^\s*with updated as \(\s*update remote_session/);
        expect(counting.trips[1]![1]).toMatch(
          /^\s*with candidate[\s\S]*settled_events as \(\s*insert into desktop_task_event[\s\S]*settled as \(\s*update desktop_task/,
        );
        expect(counting.trips[1]![2]).toBe("commit");
        // What the claim's statement settled: the task, its event, its link to the task it claimed.
        const [settled] = await gateway.sql<{ state: string; next_task_id: string; events: number; local_session_id: string }[]>`
          select state, next_task_id, local_session_id,
            (select count(*)::int from desktop_task_event e where e.organization_id = t.organization_id and e.task_id = t.id) as events
          from desktop_task t where organization_id = ${member.organizationId} and id = ${second.next!.task.id}`;
        expect(settled).toEqual({ state: "done", next_task_id: third.next!.task.id, events: 1, local_session_id: `ses_${second.next!.task.id.slice(-6)}` });
      } finally {
        await counting.sql.end();
      }
    },
  );

  it("claims with one statement text whatever its events, and settles even when nothing is left to claim", async () => {
    const member = { organizationId: "org_trips", memberId: `mem_texts_${Date.now()}` };
    const runnerId = "runner-texts-01";
    const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
    const call = gateway.call(member);
    for (const title of ["one", "two", "three"]) await gateway.sessions.create(call, { title, prompt: `question ${title}` });
    const counting = countingSql();
    const complete = completer(counting.sql, 1_000, member, runnerId);
    try {
      let taskId = (await client.claimNext())!.taskId;
      const settled: string[] = [];
      const claims: string[] = [];
      for (const events of [0, 1, 3]) {
        counting.trips.length = 0;
        const outcome = await complete(taskId, events);
        settled.push(taskId);
        claims.push(counting.trips.flat().find((statement) => /^\s*with candidate/.test(statement))!);
        if (events < 3) taskId = outcome.next!.task.id;
        else expect(outcome.next).toBeNull();
      }
      // One prepared statement for every batch size (postgres.js prepares one per text).
      expect(new Set(claims).size).toBe(1);
      const rows = await gateway.sql<{ id: string; state: string; next_task_id: string | null; events: number; fold: string }[]>`
        select id, state, next_task_id, jsonb_typeof(folded) as fold,
          (select count(*)::int from desktop_task_event e where e.organization_id = t.organization_id and e.task_id = t.id) as events
        from desktop_task t where organization_id = ${member.organizationId} and member_id = ${member.memberId} order by created_at`;
      expect(rows).toEqual([
        { id: settled[0], state: "done", next_task_id: settled[1], events: 0, fold: "object" },
        { id: settled[1], state: "done", next_task_id: settled[2], events: 1, fold: "object" },
        { id: settled[2], state: "done", next_task_id: null, events: 3, fold: "object" },
      ]);
    } finally {
      await counting.sql.end();
    }
  });

  it("fails whole when the next turn it claims cannot move its session: its COMMIT, sent with the claim, rolls back", async () => {
    const member = { organizationId: "org_trips", memberId: `mem_refused_${Date.now()}` };
    const runnerId = "runner-refused-01";
    const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
    const call = gateway.call(member);
    const one = await gateway.sessions.create(call, { title: "one", prompt: "question one" });
    const first = await client.claimNext();
    const two = await gateway.sessions.create(call, { title: "two", prompt: "question two" });
    // A state no turn may leave for running, its create still queued: the claim takes the task and
    // its session's move finds no row to move.
    await gateway.sql`update remote_session set state = 'expired' where id = ${two.sessionId}`;
    const complete = completer(gateway.sql, 0, member, runnerId);
    await expect(complete(first!.taskId)).rejects.toThrow(/the ledger refused a claimed turn's move to running/);
    const tasks = await gateway.sql<{ session_id: string; state: string; events: number }[]>`
      select t.session_id, t.state, (select count(*)::int from desktop_task_event e where e.organization_id = t.organization_id and e.task_id = t.id) as events
      from desktop_task t where t.organization_id = ${member.organizationId} and t.member_id = ${member.memberId} order by t.created_at`;
    expect(tasks).toEqual([
      { session_id: one.sessionId, state: "claimed", events: 0 },
      { session_id: two.sessionId, state: "queued", events: 0 },
    ]);
    const [session] = await gateway.sql<{ state: string }[]>`select state from remote_session where id = ${one.sessionId}`;
    expect(session!.state).toBe("running");
  });
});

/** A claimed turn of a fresh member: its runner, its task and its session. */
async function claimedTurn(name: string) {
  const member = { organizationId: "org_lock_read", memberId: `mem_${name}_${Date.now()}` };
  const runnerId = `runner-${name}-01`;
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
  await gateway.sessions.create(gateway.call(member), { title: name, prompt: `question ${name}` });
  const assignment = await client.claimNext();
  const [task] = await gateway.sql<{ session_id: string }[]>`select session_id from desktop_task where id = ${assignment!.taskId}`;
  return { owner: { ...member, runnerId }, taskId: assignment!.taskId, sessionId: task!.session_id };
}

/**
 * Runs `holder` in a transaction that holds the lock `waiter` asks for, commits it once the waiter
 * is queued behind it, and answers what the waiter read (in a transaction of its own, rolled back).
 */
async function readBehind<T>(holder: (tx: Sql) => Promise<unknown>, waiter: (tx: Sql) => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const committed = gateway.sql.begin(async (tx) => {
    await holder(tx as unknown as Sql);
    held();
    await released;
  });
  await holding;
  let read: T | undefined;
  const waited = gateway.sql
    .begin(async (tx) => {
      read = await waiter(tx as unknown as Sql);
      throw new Error("rolled back");
    })
    .catch(() => {});
  // The waiter's statement is sent and waits on the lock: its read must come after the commit.
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(read).toBeUndefined();
  release();
  await committed;
  await waited;
  return read as T;
}

describe("a lock and the read after it, in one statement (migrations 0016 and 0017)", () => {
  it("desktop_lock_own_task: the held events include those the lock's last holder committed while it waited", async () => {
    const { owner, taskId } = await claimedTurn("held");
    const event = { sequence: 1, type: "status", payload: { status: "running" } };
    const read = await readBehind(
      (tx) => tx`
        with locked as (select id from desktop_task where id = ${taskId} for update)
        insert into desktop_task_event (organization_id, task_id, attempt, sequence, type, event)
        select ${owner.organizationId}, id, 1, 1, 'status', ${tx.json(event)} from locked`,
      (tx) => lockOwnTask(tx as never, owner, taskId, { attempt: 1, events: [event as never] }),
    );
    expect(read.task).toMatchObject({ id: taskId, state: "claimed", attempt: 1 });
    expect(read.task).not.toHaveProperty("held_next");
    expect(read.held).toEqual({ next: 2, held: [[1, event]] });
  });

  it("desktop_lock_own_task: another runner's task is not found, and nothing is read of it", async () => {
    const { owner, taskId } = await claimedTurn("other");
    await expect(lockOwnTask(gateway.sql as never, { ...owner, runnerId: "runner-someone-else" }, taskId)).rejects.toMatchObject({ code: "not_found" });
  });

  it("desktop_lock_session: the turns read include what the lock's last holder committed while it waited", async () => {
    const { owner, taskId, sessionId } = await claimedTurn("turns");
    const key = { organizationId: owner.organizationId, id: sessionId };
    const read = await readBehind(
      async (tx) => {
        await tx`select 1 from remote_session where organization_id = ${key.organizationId} and id = ${key.id} for update`;
        await tx`update desktop_task set state = 'done', finished_at = now() where id = ${taskId}`;
      },
      (tx) => lockSession(tx as never, key),
    );
    expect(read).toEqual({
      ...key,
      state: "running",
      tasks: [{ id: taskId, state: "done", kind: "remote_session.create", claimed_via: "desktop-runner", progress: null }],
    });
    expect(await lockSession(gateway.sql as never, { ...key, id: "rs_gone" })).toBeNull();
  });

  it("lockOwnTaskAndSession: the task, then its session, each read after its lock, in one statement", async () => {
    const { owner, taskId, sessionId } = await claimedTurn("both");
    const read = await readBehind(
      async (tx) => {
        await tx`select 1 from desktop_task where id = ${taskId} for update`;
        await tx`update remote_session set title = 'renamed' where organization_id = ${owner.organizationId} and id = ${sessionId}`;
        await tx`update desktop_task set title = 'renamed too' where id = ${taskId}`;
      },
      (tx) => lockOwnTaskAndSession(tx as never, owner, taskId),
    );
    expect(read.task).toMatchObject({ id: taskId, title: "renamed too" });
    expect(read.task).not.toHaveProperty("session_turns");
    expect(read.held).toBeNull();
    expect(read.session).toEqual({
      id: sessionId,
      organizationId: owner.organizationId,
      state: "running",
      tasks: [{ id: taskId, state: "claimed", kind: "remote_session.create", claimed_via: "desktop-runner", progress: null }],
    });
  });
});

describe("desktop_session_turns (migration 0019): the turns the derivation reads, whatever the session's length", () => {
  /** Ends the session's create and adds `states.length` follow-ups after it, oldest first, one second apart. */
  const longSession = async (name: string, states: string[]) => {
    const { owner, taskId, sessionId } = await claimedTurn(name);
    await gateway.sql`update desktop_task set state = 'done', finished_at = now(), created_at = now() - interval '1 day' where id = ${taskId}`;
    const ids = states.map(
      (_, i) =>
        `rst_${name
          .replace(/[^a-z]/g, "")
          .padEnd(20, "0")
          .slice(0, 20)}${String(i).padStart(6, "0")}`,
    );
    await gateway.sql`
      insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline, created_at)
      select id, ${owner.organizationId}, ${owner.memberId}, ${sessionId}, 'remote_session.send', state, 'turn', 1, '{}', now() + interval '1 hour',
             now() - interval '1 hour' + make_interval(secs => n)
      from unnest(${ids}::text[], ${states}::text[]) with ordinality as turn(id, state, n)`;
    const all = await gateway.sql<DerivationTask[]>`
      select id, state, kind, claimed_via, progress->>'status' as progress from desktop_task
      where session_id = ${sessionId} and kind in ('remote_session.create', 'remote_session.send') order by created_at desc, id desc`;
    const [{ turns }] = (await gateway.sql`select desktop_session_turns(${owner.organizationId}, ${sessionId}) as turns`) as unknown as [
      { turns: DerivationTask[] },
    ];
    return { taskId, ids, all, turns };
  };

  it.each([
    ["finished", [...Array(40).fill("done"), "failed", "done"], [41], "idle"],
    ["a-claimed-one", [...Array(40).fill("done"), "claimed", "queued"], [41, 40], "running"],
    ["a-queued-one", [...Array(40).fill("done"), "queued", "expired"], [41, 40], "queued"],
    ["an-expired-last", [...Array(40).fill("done"), "expired"], [40], "interrupted"],
  ] as const)("a session of 43 turns, %s: only its open turns, its newest and its create, newest first", async (name, states, kept, derived) => {
    const { taskId, ids, all, turns } = await longSession(name, [...states]);
    expect(turns.map((t) => t.id)).toEqual([...kept.map((i) => ids[i]), taskId]);
    // The same state as from every turn of the session, from whatever the session held.
    for (const current of ["idle", "running", "waiting_input"] as const) {
      expect(deriveSessionState(gateway.store.dialects, turns, current)).toBe(deriveSessionState(gateway.store.dialects, all, current));
    }
    expect(deriveSessionState(gateway.store.dialects, turns, "running")).toBe(derived);
  });
});

describe("desktop_session_turns (migration 0020): the newest turn, one step by key", () => {
  it("reads a handful of pages, not its organization's range of tasks, while the statistics have not yet seen them", async () => {
    const { owner, sessionId } = await claimedTurn("newest-by-key");
    // The organization's finished work, other sessions, written in one burst: no statistics yet
    // (autovacuum is held off so none arrive mid-test), as in a drain that fills a new table.
    await gateway.sql`alter table desktop_task set (autovacuum_enabled = off, toast.autovacuum_enabled = off)`;
    try {
      await gateway.sql`
        insert into remote_session (id, organization_id, user_id, target, title, state, last_activity_at)
        select 'rs_newest' || lpad(i::text, 20, '0'), ${owner.organizationId}, 'usr_newest', 'desktop', 'old', 'idle', now()
        from generate_series(1, 3000) as i`;
      await gateway.sql`
        insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline, created_at, finished_at)
        select 'rst_newest' || lpad(i::text, 20, '0'), ${owner.organizationId}, ${owner.memberId}, 'rs_newest' || lpad(i::text, 20, '0'),
               'remote_session.create', 'done', 'old', 1, '{}', now(), now(), now()
        from generate_series(1, 3000) as i`;
      // The function's own query, planned as PL/pgSQL plans it once it caches: generically.
      const [{ prosrc }] = (await gateway.sql`select prosrc from pg_proc where proname = 'desktop_session_turns'`) as unknown as [{ prosrc: string }];
      const query = prosrc
        .slice(prosrc.indexOf("(") + 1, prosrc.lastIndexOf(")"))
        .replaceAll("p_organization_id", "$1")
        .replaceAll("p_session_id", "$2");
      const { Plan: plan } = await gateway.sql.begin(async (tx) => {
        await tx.unsafe("set local plan_cache_mode = force_generic_plan");
        return explainPlan(tx, query, [owner.organizationId, sessionId]);
      });
      const scans = planNodes(plan).filter((n) => n["Index Name"]);
      expect(scans.map((n) => n["Index Name"])).not.toContain("desktop_task_pkey");
      expect(scans.find((n) => n["Index Name"] === "desktop_task_session")?.["Index Cond"]).toMatch(/organization_id/);
      expect(plan["Shared Hit Blocks"]).toBeLessThanOrEqual(12);
    } finally {
      await gateway.sql`alter table desktop_task reset (autovacuum_enabled, toast.autovacuum_enabled)`;
    }
  });
});
