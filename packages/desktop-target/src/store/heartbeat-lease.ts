import type { Queryable } from "@openwork/remote-session-core/internal";
import type { HeartbeatResponse } from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import type { RunnerIdentity } from "./task-row.js";
import { leaving } from "./task-state-sql.js";

/**
 * Extends the lease of the runner's current attempt. The lease stays valid while the task is
 * still `claimed` by this attempt: only the sweeper ends a lease, so there is one judge of it.
 * A heartbeat that finds more than half the lease left writes nothing (it only reads): with the
 * heartbeat at a third of the lease, every other one extends it, and the lease never runs short.
 */
export async function heartbeatLease(sql: Queryable, runner: RunnerIdentity, taskId: string, attempt: number, leaseMs: number): Promise<HeartbeatResponse> {
  const held = sql`${leaving(sql, "renew")} and attempt = ${attempt}`;
  const [row] = await sql<{ lease_expires_at: Date | null; cancel_requested: boolean; held: boolean }[]>`
    with extended as (
      update desktop_task set lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
      where id = ${taskId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
        and claimed_by_runner_id = ${runner.runnerId} and ${held}
        and lease_expires_at < now() + make_interval(secs => ${leaseMs / 2000})
      returning lease_expires_at, cancel_requested)
    select lease_expires_at, cancel_requested, true as held from extended
    union all
    select case when ${held} then lease_expires_at end, cancel_requested, ${held} from desktop_task
    where id = ${taskId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}
      and claimed_by_runner_id = ${runner.runnerId} and not exists (select 1 from extended)`;
  if (!row) throw new ChannelRefusal("not_found", "no such task");
  return {
    attempt,
    leaseValid: row.held,
    leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
    cancelRequested: row.cancel_requested,
  };
}
