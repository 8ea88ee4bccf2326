// The floor of the server's CPU per task in this architecture: one HTTP request per task (a
// protocol-3 completion that claims the next task), answered by the least a server can do, beside
// graphile-worker's CPU per job in the same run. The same 16 runner clients (ky, a process of their
// own) as server-cpu.ts drive a minimal Hono server on @hono/node-server (the gateway's stack)
// that verifies the runner token, parses the request and its reply with the protocol's schemas,
// and makes K round trips to PostgreSQL per request (K = 0: a queue in memory). Nothing of the
// gateway runs: what this server spends is what any server of this shape spends, so a goal below
// it cannot be met by cutting the gateway.
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { ClaimNextRequestSchema, type CompleteRequest, CompleteRequestSchema, RUNNER_PATHS, RUNNER_ROUTE_PREFIX } from "@openwork/runner-protocol/internal";
import { bearerToken, mintRunnerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import { Hono } from "hono";
import postgres, { type Sql } from "postgres";
import { drainGraphileWorker } from "./graphile-baseline.js";
import { benchDatabase, report } from "./harness.js";
import { clusterCpuMs, cpuMsSince, perTask, postmasterOf, serverCpuColumns } from "./process-cpu.js";
import { drainThroughRunners } from "./runner-drain.js";

const TASKS = Number(process.env.TASKS ?? 4_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const WARMUP = Number(process.env.WARMUP ?? 1_000);
const RUNNERS = 16;
const SECRET = "floor-bench-secret-of-at-least-32-bytes";

/** A task as the floor hands it out. */
interface FloorTask {
  id: string;
  attempt: number;
}

/** Where the floor keeps its tasks: claims the oldest queued one, settles a claimed one, in K round trips. */
interface FloorStore {
  readonly trips: number;
  /** Settles `settle` (when given) and claims the next task for `runnerId`; false when the settle found no task held. */
  completeAndClaim(runnerId: string, settle: { id: string; body: CompleteRequest } | null): Promise<{ settled: boolean; next: FloorTask | null }>;
  queue(tasks: number): Promise<void>;
}

const CLAIM = (sql: Sql, runnerId: string) => sql`
  with c as (select id from floor_task where state = 'queued' order by created_at limit 1 for update skip locked)
  update floor_task t set state = 'claimed', attempt = t.attempt + 1, runner_id = ${runnerId} from c where t.id = c.id
  returning t.id, t.attempt`;
const SETTLE = (sql: Sql, runnerId: string, { id, body }: { id: string; body: CompleteRequest }) => {
  const { next: _, ...completion } = body;
  return sql`
    update floor_task set state = 'done', completion = ${sql.json(completion as never)}, finished_at = now()
    where id = ${id} and runner_id = ${runnerId} and attempt = ${body.attempt} and state = 'claimed'
    returning 1`;
};

/** K = 0: no database at all, the floor of HTTP, tokens and schemas alone. */
function memoryStore(): FloorStore {
  const queued: FloorTask[] = [];
  const held = new Map<string, string>();
  return {
    trips: 0,
    queue: async (tasks) => {
      for (let i = 0; i < tasks; i++) queued.push({ id: `ft_${queued.length}_${i}`, attempt: 1 });
    },
    completeAndClaim: async (runnerId, settle) => {
      const settled = settle === null || held.get(settle.id) === runnerId;
      if (settle && settled) held.delete(settle.id);
      const next = queued.shift() ?? null;
      if (next) held.set(next.id, runnerId);
      return { settled, next };
    },
  };
}

/** K = 1, 2 or 3 round trips per request to PostgreSQL, the settle and the claim in one transaction (K ≥ 2) or one statement (K = 1). */
function databaseStore(sql: Sql, trips: 1 | 2 | 3): FloorStore {
  return {
    trips,
    queue: async (tasks) => {
      await sql`insert into floor_task (id) select 'ft_' || gen_random_uuid() from generate_series(1, ${tasks})`;
    },
    completeAndClaim: async (runnerId, settle) => {
      if (trips === 1) {
        const [row] = await sql<{ settled: number; id: string | null; attempt: number | null }[]>`
          with settled as (${settle ? SETTLE(sql, runnerId, settle) : sql`select 1 where false`}),
            c as (select id from floor_task where state = 'queued' order by created_at limit 1 for update skip locked),
            claimed as (update floor_task t set state = 'claimed', attempt = t.attempt + 1, runner_id = ${runnerId} from c where t.id = c.id returning t.id, t.attempt)
          select (select count(*)::int from settled) as settled, claimed.id, claimed.attempt from (select 1) one left join claimed on true`;
        return { settled: settle === null || row!.settled === 1, next: row!.id ? { id: row!.id, attempt: row!.attempt! } : null };
      }
      const tx = await sql.reserve();
      try {
        const begun = tx`begin`.execute();
        const settled = settle ? SETTLE(tx as unknown as Sql, runnerId, settle).execute() : null;
        const first = await Promise.all([begun, settled]);
        const claimed = CLAIM(tx as unknown as Sql, runnerId).execute();
        const committed = trips === 2 ? tx`commit`.execute() : null;
        const [rows] = await Promise.all([claimed, committed]);
        if (trips === 3) await tx`commit`;
        const next = (rows as unknown as FloorTask[])[0] ?? null;
        return { settled: settle === null || (first[1] as unknown[]).length === 1, next };
      } catch (error) {
        await tx`rollback`.catch(() => {});
        throw error;
      } finally {
        tx.release();
      }
    },
  };
}

/** The floor server: the two runner routes of protocol 3, nothing else. */
function floorServer(store: FloorStore, audience: () => string) {
  const app = new Hono().basePath(RUNNER_ROUTE_PREFIX);
  const runnerOf = (header: string | undefined) => {
    const verified = verifyRunnerToken(bearerToken(header), { secret: SECRET, audiences: [audience()] });
    return verified.ok ? verified.claims.r : null;
  };
  const assignment = (task: FloorTask) => ({
    kind: "remote_session.create" as const,
    taskId: task.id,
    sessionId: `rs_${task.id.slice(3)}`,
    attempt: task.attempt,
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    heartbeatIntervalMs: 20_000,
    model: null,
    title: "floor",
    prompt: "p",
    workspaceId: null,
  });
  app.post(RUNNER_PATHS.claimNext, async (c) => {
    const runnerId = runnerOf(c.req.header("authorization"));
    if (!runnerId) return c.json({ code: "unauthorized" }, 401);
    if (!ClaimNextRequestSchema.safeParse(await c.req.json()).success) return c.json({ code: "invalid_request" }, 400);
    const { next } = await store.completeAndClaim(runnerId, null);
    return c.json({ assignment: next && assignment(next) });
  });
  app.post("/tasks/:id/complete", async (c) => {
    const runnerId = runnerOf(c.req.header("authorization"));
    if (!runnerId) return c.json({ code: "unauthorized" }, 401);
    const parsed = CompleteRequestSchema.safeParse(await c.req.json());
    if (!parsed.success) return c.json({ code: "invalid_request" }, 400);
    const taskId = c.req.param("id");
    const { settled, next } = await store.completeAndClaim(runnerId, { id: taskId, body: parsed.data });
    if (!settled) return c.json({ code: "attempt_superseded" }, 409);
    return c.json({ taskId, state: parsed.data.status, next: next && assignment(next) });
  });
  return app;
}

/** What one drain cost: tasks, seconds, this process's and the cluster's CPU, the runners' CPU and requests. */
interface Drain {
  done: number;
  seconds: number;
  serverMs: number;
  clusterMs: number;
  runnersMs: number;
  requests: number;
}

async function drainFloor(url: string, trips: 0 | 1 | 2 | 3, tasks: number): Promise<Drain> {
  const sql = postgres(url, { max: 20, onnotice: () => {} });
  const store = trips === 0 ? memoryStore() : databaseStore(sql, trips);
  let baseUrl = "";
  const server = serve({ fetch: floorServer(store, () => baseUrl).fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await sql`truncate floor_task`;
    await store.queue(tasks);
    const postmaster = await postmasterOf(sql);
    const tokens = Array.from(
      { length: RUNNERS },
      (_, i) =>
        mintRunnerToken({ secret: SECRET, organizationId: "org_floor", memberId: "mem_floor", runnerId: `floor-${i}`, capabilities: [], audience: baseUrl })
          .token,
    );
    const serverStart = process.cpuUsage();
    const clusterStart = clusterCpuMs(postmaster);
    const { reported, exited } = drainThroughRunners(baseUrl, tokens);
    const outcome = await reported;
    const drained = {
      done: outcome.done,
      seconds: outcome.seconds,
      serverMs: cpuMsSince(serverStart),
      clusterMs: clusterCpuMs(postmaster) - clusterStart,
      runnersMs: outcome.cpuMs,
      requests: outcome.requests,
    };
    await exited;
    if (drained.done !== tasks) throw new Error(`the floor drained ${drained.done} of ${tasks} tasks`);
    return drained;
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await sql.end();
  }
}

const db = await benchDatabase("server-floor");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const setup = postgres(db.url, { max: 1, onnotice: () => {} });
  await setup`create table floor_task (
    id text primary key, state text not null default 'queued', attempt int not null default 0, runner_id text,
    completion jsonb, created_at timestamptz not null default clock_timestamp(), finished_at timestamptz)`;
  await setup`create index floor_task_queued on floor_task (created_at) where state = 'queued'`;
  const postmaster = await postmasterOf(setup);
  await setup.end();
  const variants = ([0, 1, 2, 3] as const).map((trips) => ({ trips, total: { done: 0, seconds: 0, serverMs: 0, clusterMs: 0, runnersMs: 0, requests: 0 } }));
  for (const { trips } of variants) await drainFloor(db.url, trips, Math.max(WARMUP, 100));
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const drained = await drainFloor(db.url, variant.trips, TASKS);
      for (const key of Object.keys(drained) as (keyof Drain)[]) variant.total[key] += drained[key];
    }
  }
  for (const { trips, total } of variants) {
    rows[`floor: Hono + 1 request per task, ${trips === 0 ? "no database" : `${trips} round trip${trips === 1 ? "" : "s"} to PostgreSQL`}`] = {
      tasks: total.done,
      seconds: +total.seconds.toFixed(2),
      ...serverCpuColumns(total.serverMs, total.clusterMs, total.done),
      "runners µs/task (not the server's)": perTask(total.runnersMs, total.done),
      requestsPerTask: +(total.requests / total.done).toFixed(2),
    };
  }
  if (WARMUP > 0) await drainGraphileWorker(db.url, WARMUP, RUNNERS, () => () => undefined);
  const { processed, seconds, metered } = await drainGraphileWorker(db.url, TASKS, RUNNERS, () => {
    const workerStart = process.cpuUsage();
    const clusterStart = clusterCpuMs(postmaster);
    return () => ({ workerMs: cpuMsSince(workerStart), clusterMs: clusterCpuMs(postmaster) - clusterStart });
  });
  const baseline = "baseline: graphile-worker + PostgreSQL, no-op jobs";
  rows[baseline] = {
    tasks: processed,
    seconds: +seconds.toFixed(2),
    ...serverCpuColumns(metered.workerMs, metered.clusterMs, processed),
  };
  for (const label of Object.keys(rows).filter((key) => key.startsWith("floor"))) {
    rows[`ratio (${label.slice("floor: Hono + 1 request per task, ".length)} / graphile-worker)`] = {
      "server µs/task": +((rows[label]!["server µs/task"] as number) / (rows[baseline]!["server µs/task"] as number)).toFixed(2),
    };
  }
} finally {
  await db.stop();
}

await report("server-floor", db.server, rows, [
  `each variant drained ${WARMUP} tasks first, not counted (WARMUP); then ${ROUNDS} drains of ${TASKS} tasks each, the order alternating (rows: their sums).`,
  "the floor server: Hono on @hono/node-server in this process, the runner token verified (HMAC), the request parsed with the protocol's schemas, one task table (a partial index on the queued ones), the settle and the next claim in one statement (1 round trip) or one transaction (2: BEGIN with the settle, the claim with COMMIT; 3: COMMIT alone); no events table, no session, no registration, no hints.",
  "the runners: the same 16 ky clients in a process of their own as server-cpu (protocol 3: each complete carries two events and claims the next task). graphile-worker 0.16.6: one worker, concurrency 16, in this process.",
]);
process.exit(0);
