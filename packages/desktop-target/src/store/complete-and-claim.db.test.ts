import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";
import type { VerifiedRunner } from "./check-registration.js";
import { createRegistrationCache } from "../routes/registration-cache.js";
import { completeAndClaim } from "./complete-and-claim.js";

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

describe("completeAndClaim", () => {
  it.each([
    // BEGIN, the registration, the task's lock with its held events | the events, the settled
    // task with its fold, the session's lock with its turns | the session's move, then the next
    // claim | COMMIT.
    { cache: "off", ttlMs: 0, trips: [3, 3, 2, 1], statements: 9 },
    // The registration read by the completion before, served from the cache: not read again.
    { cache: "1 s", ttlMs: 1_000, trips: [2, 3, 2, 1], statements: 8 },
  ])(
    "completes a turn with its last events and claims the runner's next task in 4 round trips and $statements statements (registration cache $cache)",
    async ({ ttlMs, trips, statements }) => {
      const member = { organizationId: "org_trips", memberId: `mem_trips_${ttlMs}_${Date.now()}` };
      const runnerId = "runner-trips-01";
      const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, runnerId) });
      const call = gateway.call(member);
      for (const title of ["one", "two", "three"]) await gateway.sessions.create(call, { title, prompt: `question ${title}` });
      const first = await client.claimNext();
      const counting = countingSql();
      const scope = {
        sql: counting.sql,
        publisher: gateway.store.publisher,
        leaseMs: 60_000,
        turnEventBytes: 4 * 1024 * 1024,
        registrations: createRegistrationCache({ ttlMs }),
      };
      const verified: VerifiedRunner = {
        holder: { ...member, runnerId, mintedAt: Date.now() - 1000 },
        expiresAt: Date.now() + 3_600_000,
        dialect: "desktop-runner",
        tokenCapabilities: [],
      };
      const complete = (taskId: string) =>
        completeAndClaim(scope, verified, taskId, {
          attempt: 1,
          status: "done",
          localSessionId: `ses_${taskId.slice(-6)}`,
          events: [{ sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: "answer" } }],
          next: {},
        });
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
        expect(counting.trips[0]!.at(-1)).toMatch(/desktop_lock_own_task/);
        expect(counting.trips[1]!.at(-1)).toMatch(/desktop_lock_session/);
        expect(counting.trips[2]![0]).toMatch(/^\s*update remote_session/);
        expect(counting.trips[2]![1]).toMatch(/^\s*with candidate/);
        expect(counting.trips[3]).toEqual(["commit"]);
      } finally {
        await counting.sql.end();
      }
    },
  );
});
