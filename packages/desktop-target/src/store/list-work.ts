import type { Queryable } from "@openwork/remote-session-core/internal";
import { LIMITS } from "@openwork/runner-protocol";
import { eligibleFor } from "./eligibility.js";
import type { RunnerIdentity, TaskKind } from "./task-row.js";

/** The tasks this runner may claim now, oldest first. */
export async function listWork(sql: Queryable, runner: RunnerIdentity): Promise<{ taskId: string; kind: TaskKind; deliverBy: string | null }[]> {
  const rows = await sql<{ id: string; kind: TaskKind; deliver_by: Date | null }[]>`
    select t.id, t.kind, t.deliver_by from desktop_task t
    where ${eligibleFor(sql, runner)}
    order by t.created_at
    limit ${LIMITS.workItems}`;
  return rows.map((row) => ({ taskId: row.id, kind: row.kind, deliverBy: row.deliver_by?.toISOString() ?? null }));
}

/** Whether any task waits that this runner may claim now (the same predicate as the listing). */
export async function hasWork(sql: Queryable, runner: RunnerIdentity): Promise<boolean> {
  const [row] = await sql<{ waiting: boolean }[]>`select exists (select 1 from desktop_task t where ${eligibleFor(sql, runner)}) as waiting`;
  return row?.waiting === true;
}
