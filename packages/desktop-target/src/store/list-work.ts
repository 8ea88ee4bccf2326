import type { Queryable } from "@openwork/remote-session-core";
import { LIMITS, type WorkItem } from "@openwork/runner-protocol";
import { eligibleFor } from "./eligibility.js";
import type { RunnerIdentity } from "./task-row.js";

/** The tasks this runner may claim now, oldest first. */
export async function listWork(sql: Queryable, runner: RunnerIdentity): Promise<WorkItem[]> {
  const rows = await sql<{ id: string; kind: WorkItem["kind"]; deliver_by: Date | null }[]>`
    select t.id, t.kind, t.deliver_by from desktop_task t
    where ${eligibleFor(sql, runner)}
    order by t.created_at
    limit ${LIMITS.workItems}`;
  return rows.map((row) => ({ taskId: row.id, kind: row.kind, deliverBy: row.deliver_by?.toISOString() ?? null }));
}
