import type { Queryable } from "@openwork/remote-session-core";
import type { RunnerIdentity } from "./task-row.js";

// Presence needs minutes of precision, not a write per request: at most one write per runner
// every few seconds, however often it polls or keeps a stream alive.
const PRESENCE_WRITE_INTERVAL_SECONDS = 5;

/**
 * Marks the runner as seen now (throttled) and returns its registered protocol version, or null
 * when the runner is not registered to this member any more (its token must not work).
 */
export async function touchRunner(
  sql: Queryable,
  runner: Pick<RunnerIdentity, "organizationId" | "memberId" | "runnerId">,
): Promise<number | null> {
  const [row] = await sql<{ protocol_version: number; stale: boolean }[]>`
    select protocol_version, last_seen_at < now() - make_interval(secs => ${PRESENCE_WRITE_INTERVAL_SECONDS}) as stale
    from desktop_runner
    where runner_id = ${runner.runnerId} and organization_id = ${runner.organizationId} and member_id = ${runner.memberId}`;
  if (!row) return null;
  if (row.stale) {
    await sql`
      update desktop_runner set last_seen_at = now()
      where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and runner_id = ${runner.runnerId}`;
  }
  return row.protocol_version;
}
