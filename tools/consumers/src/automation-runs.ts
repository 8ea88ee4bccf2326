import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { HostWorkKind, WorkClaim, WorkCompletion, WorkLease, WorkRefusal, WorkRunner } from "@openwork/desktop-target";
import type { Sql } from "postgres";

// A test host's own kind of work, as OpenWork's Automations are: runs in the host's own table,
// with its own lifecycle words (scheduled → running → succeeded | failed | cancelled, and `lost`
// when the desktop running it vanished: an automation run is reported, never silently retried),
// served to desktops on the gateway's runner channel beside the remote sessions.

/** The host's table of automation runs (and the events their runners posted). */
export async function migrateAutomationRuns(sql: Sql): Promise<void> {
  await sql`create table if not exists automation_run (
    id text primary key,
    organization_id text not null,
    member_id text not null,
    runner_id text,
    state text not null default 'scheduled',
    attempt int not null default 0,
    lease_expires_at timestamptz,
    cancel_requested boolean not null default false,
    input jsonb not null,
    completion jsonb,
    created_at timestamptz not null default clock_timestamp(),
    claimed_at timestamptz
  )`;
  await sql`create table if not exists automation_run_event (
    run_id text not null, attempt int not null, sequence int not null, type text not null, payload jsonb not null,
    primary key (run_id, attempt, sequence)
  )`;
}

interface RunRow {
  id: string;
  state: string;
  attempt: number;
  runner_id: string | null;
  lease_expires_at: Date | null;
  cancel_requested: boolean;
  input: Record<string, unknown>;
  completion: WorkCompletion | null;
  created_at: Date;
  claimed_at: Date | null;
}

const WORDS = { done: "succeeded", failed: "failed", cancelled: "cancelled" } as const;
const notFound: WorkRefusal = { refused: "not_found", message: "no such automation run" };
const leaseLost: WorkRefusal = { refused: "lease_lost", message: "this attempt no longer holds the run" };

/** Schedules a run for a member; the caller announces it to the member's runners. */
export async function scheduleAutomationRun(sql: Sql, member: { organizationId: string; memberId: string }, input: Record<string, unknown>): Promise<string> {
  const id = `arun_${randomBytes(10).toString("hex")}`;
  await sql`insert into automation_run (id, organization_id, member_id, input) values (${id}, ${member.organizationId}, ${member.memberId}, ${sql.json(input as never)})`;
  return id;
}

/** The host's own listing of a member's runs: what its Automations page shows. */
export async function listAutomationRuns(sql: Sql, member: { organizationId: string; memberId: string }): Promise<RunRow[]> {
  return sql<RunRow[]>`select * from automation_run where organization_id = ${member.organizationId} and member_id = ${member.memberId} order by created_at`;
}

/** The run a runner of the member holds (any attempt), or null: another member's run is not found. */
async function ownRun(sql: Sql, runner: WorkRunner, id: string): Promise<RunRow | null> {
  const [row] = await sql<RunRow[]>`
    select * from automation_run where id = ${id} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and runner_id = ${runner.runnerId}`;
  return row ?? null;
}

async function claimNext(sql: Sql, runner: WorkRunner, leaseMs: number): Promise<WorkClaim | null> {
  const [row] = await sql<RunRow[]>`
    update automation_run set state = 'running', attempt = attempt + 1, runner_id = ${runner.runnerId},
      lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), claimed_at = clock_timestamp()
    where id = (
      select id from automation_run
      where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and state = 'scheduled'
      order by created_at limit 1 for update skip locked)
    returning *`;
  return row ? { taskId: row.id, attempt: row.attempt, leaseExpiresAt: row.lease_expires_at!, input: row.input } : null;
}

async function heartbeat(sql: Sql, runner: WorkRunner, id: string, attempt: number, leaseMs: number): Promise<WorkLease | WorkRefusal> {
  const [row] = await sql<RunRow[]>`
    update automation_run set lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000})
    where id = ${id} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
      and runner_id = ${runner.runnerId} and attempt = ${attempt} and state = 'running'
    returning *`;
  if (row) return { leaseValid: true, leaseExpiresAt: row.lease_expires_at, cancelRequested: row.cancel_requested };
  return (await ownRun(sql, runner, id)) ? { leaseValid: false, leaseExpiresAt: null, cancelRequested: false } : notFound;
}

async function appendEvents(
  sql: Sql,
  runner: WorkRunner,
  id: string,
  attempt: number,
  events: readonly { sequence: number; type: string; payload: unknown }[],
) {
  const run = await ownRun(sql, runner, id);
  if (!run) return notFound;
  if (run.state !== "running" || run.attempt !== attempt) return leaseLost;
  const [{ next } = { next: 1 }] = await sql<{ next: number }[]>`
    select coalesce(max(sequence), 0) + 1 as next from automation_run_event where run_id = ${id} and attempt = ${attempt}`;
  if (events[0]!.sequence > next) return { refused: "sequence_gap", message: `expected event ${next}` } satisfies WorkRefusal;
  for (const event of events) {
    await sql`insert into automation_run_event values (${id}, ${attempt}, ${event.sequence}, ${event.type}, ${sql.json(event.payload as never)})
      on conflict do nothing`;
  }
  return { nextSequence: Math.max(next, events.at(-1)!.sequence + 1) };
}

async function complete(sql: Sql, runner: WorkRunner, id: string, completion: WorkCompletion): Promise<{ state: string } | WorkRefusal> {
  const run = await ownRun(sql, runner, id);
  if (!run) return notFound;
  if (run.completion) {
    const { events: _, ...asked } = completion;
    const same = isDeepStrictEqual(run.completion, JSON.parse(JSON.stringify(asked)));
    return same ? { state: run.state } : { refused: "completion_conflict", message: "the run was completed differently" };
  }
  if (run.state !== "running" || run.attempt !== completion.attempt) return leaseLost;
  if (completion.events) {
    const appended = await appendEvents(sql, runner, id, completion.attempt, completion.events);
    if ("refused" in appended) return appended;
  }
  const { events: _, ...kept } = completion;
  const [row] = await sql<RunRow[]>`
    update automation_run set state = ${WORDS[completion.status]}, completion = ${sql.json(kept as never)}, lease_expires_at = null
    where id = ${id} and state = 'running' and attempt = ${completion.attempt} returning *`;
  return row ? { state: row.state } : leaseLost;
}

/** The host's automation kind on the runner channel. */
export function automationRuns(sql: Sql): HostWorkKind {
  return {
    kind: "automation.run",
    idPrefix: "arun_",
    claimNext: (runner, leaseMs) => claimNext(sql, runner, leaseMs),
    heartbeat: (runner, id, attempt, leaseMs) => heartbeat(sql, runner, id, attempt, leaseMs),
    appendEvents: (runner, id, attempt, events) => appendEvents(sql, runner, id, attempt, events),
    complete: (runner, id, completion) => complete(sql, runner, id, completion),
    // A run whose desktop stopped heartbeating is `lost`: the host reports it rather than run it twice.
    sweep: async () => {
      await sql`update automation_run set state = 'lost' where state = 'running' and lease_expires_at < now()`;
    },
  };
}
