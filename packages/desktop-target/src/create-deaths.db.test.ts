import { createRemoteSessions, createSessionLedger, type MemberScope, pruneLedger, SessionFailure, type Target } from "@openwork/remote-session-core";
import { killableClient, ProcessKilled, useTestDatabase } from "@openwork/test-postgres";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesktopTarget } from "./desktop-target.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// A gateway killed (kill -9) in the middle of an idempotent create, then the client retrying
// with the same key: wherever the process died, the key converges on one session with one task,
// and a row the dead process left is readable, stoppable and in the end removed.
const db = useTestDatabase();
let gateway: RunnerGateway;
const member: MemberScope = { organizationId: "org_deaths", memberId: "mem_deaths" };
let users = 0;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
  await gateway.registerRunner(member, "runner-deaths-01");
});
afterAll(async () => {
  await gateway?.close();
});

/** One gateway process: the core and the desktop target over its own database client. */
const processOn = (sql: Sql) => {
  const ledger = createSessionLedger(sql);
  const target: Target = createDesktopTarget({ sql, hub: gateway.hub });
  return { ledger, target, sessions: createRemoteSessions(ledger) };
};

const input = { title: "Deaths", prompt: "build it", extra: {} };

/** A create as the capability runs it: idempotent, rate limited before each attempt that works. */
const createIn = (process: ReturnType<typeof processOn>, call: ReturnType<RunnerGateway["call"]>, key: string) =>
  process.sessions.create(call, process.target, input, { idempotencyKey: key, admit: () => process.ledger.takeRateLimit(call) });

/** The member's sessions and each one's create tasks. */
async function stored(userId: string) {
  const rows = await gateway.sql<{ id: string; state: string; reserved: boolean; tasks: number }[]>`
    select s.id, s.state, s.reserved_at is not null as reserved,
      (select count(*)::int from desktop_task t where t.organization_id = s.organization_id and t.session_id = s.id and t.kind = 'remote_session.create') as tasks
    from remote_session s where s.organization_id = ${member.organizationId} and s.user_id = ${userId}`;
  return rows.map((row) => ({ ...row }));
}

/** A new owner, and a create of theirs killed after `lives` statements; null when it finished first. */
async function killedCreate(lives: number) {
  const call = gateway.call({ ...member, userId: `user_deaths_${++users}` });
  const dying = killableClient(gateway.sql, lives);
  const outcome = await createIn(processOn(dying.sql), call, `key-${users}`).then(
    () => "finished" as const,
    (error: unknown) => {
      if (!(error instanceof ProcessKilled)) throw error;
      return "killed" as const;
    },
  );
  return { call, outcome, key: `key-${users}`, sent: dying.sent() };
}

/** As if the dead attempt's claim were older than the 120 s after which a retry takes it over. */
const ageClaim = (userId: string) =>
  gateway.sql`update remote_session_idempotency set claimed_at = claimed_at - interval '3 minutes' where organization_id = ${member.organizationId} and user_id = ${userId}`;

describe("an idempotent desktop create killed at every statement", () => {
  let statements = 0;
  beforeAll(async () => {
    const whole = await killedCreate(Number.POSITIVE_INFINITY);
    expect(whole.outcome).toBe("finished");
    statements = whole.sent;
    expect(statements).toBeGreaterThan(8);
  });

  it("converges on one session and one task when the client retries with the same key", async () => {
    const live = processOn(gateway.sql);
    for (let lives = 0; lives < statements; lives++) {
      const { call, outcome, key } = await killedCreate(lives);
      expect(outcome, `killed after ${lives}`).toBe("killed");
      // Meanwhile, what the dead process left reads as it lists: never unknown to read.
      const { sessions: listed } = await live.ledger.list(call, { limit: 10 });
      for (const session of listed) {
        const read = await live.sessions.read(call, live.target, session, { limit: 20, waitMs: 0, from: "start" });
        expect(read.state, `killed after ${lives}`).toBe(session.state);
      }
      await ageClaim(call.userId);
      const retried = await createIn(live, call, key);
      const rows = await stored(call.userId);
      expect(rows, `killed after ${lives}`).toEqual([{ id: retried.sessionId, state: "queued", reserved: false, tasks: 1 }]);
      expect(retried).toMatchObject({ state: "queued", fields: { runner: { runnerId: "runner-deaths-01" } } });
      // And once more: the stored result, the same session.
      expect((await createIn(live, call, key)).sessionId).toBe(retried.sessionId);
    }
  });

  it("lets a stop end a row the dead process left, and a retry then makes nothing for it", async () => {
    const live = processOn(gateway.sql);
    let reservations = 0;
    for (let lives = 0; lives < statements; lives++) {
      const { call, key } = await killedCreate(lives);
      const [left] = (await live.ledger.list(call, { limit: 10 })).sessions;
      if (!left) continue;
      const stopped = await live.sessions.stop(call, live.target, left);
      expect(stopped, `killed after ${lives}`).toEqual({ sessionId: left.id, stopped: true });
      const after = (await live.ledger.find(call, left.id))!;
      expect(after.state).toBe("stopped");
      expect((await live.sessions.read(call, live.target, after, { limit: 20, waitMs: 0, from: "start" })).state).toBe("stopped");
      await ageClaim(call.userId);
      expect((await createIn(live, call, key)).sessionId).toBe(left.id);
      const rows = await stored(call.userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ id: left.id, state: "stopped" });
      if (rows[0]!.reserved) {
        reservations++;
        expect(rows[0]!.tasks).toBe(0);
        // Nothing exists on the desktop's side: a follow-up is refused, not queued for nobody.
        const refused = await live.sessions.send(call, live.target, after, { prompt: "and then" }).catch((error: unknown) => error);
        expect(SessionFailure.isInstance(refused) && refused.error.error).toBe("session_not_active");
      }
    }
    expect(reservations).toBeGreaterThan(0);
  });

  it("removes, after the bound, a reserved row no retry came for, and keeps every row its target took", async () => {
    const left: { userId: string; reserved: boolean }[] = [];
    for (let lives = 0; lives < statements; lives++) {
      const { call } = await killedCreate(lives);
      for (const row of await stored(call.userId)) left.push({ userId: call.userId, reserved: row.reserved });
    }
    expect(left.some((row) => row.reserved)).toBe(true);
    expect(left.some((row) => !row.reserved)).toBe(true);
    await gateway.sql`update remote_session set reserved_at = now() - interval '11 minutes' where reserved_at is not null`;
    await pruneLedger(gateway.sql);
    for (const row of left) {
      const rows = await stored(row.userId);
      expect(rows).toHaveLength(row.reserved ? 0 : 1);
      if (!row.reserved) expect(rows[0]!.tasks).toBe(1);
    }
  });
});
