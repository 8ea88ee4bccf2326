import type { Sql } from "postgres";
import { syncSessionState } from "./sync-session-state.js";

interface Moved {
  session_id: string;
  failure_code: string;
  failure_message: string;
}

/**
 * One sweep: attempts whose lease lapsed become `interrupted` (their events stay), and queued
 * tasks past `deliverBy` or their claim deadline become `expired` with a cause; each session
 * touched gets its state derived again. The database clock decides every deadline. Each task
 * moves in one update guarded by its state, so sweepers on several replicas never clash: a row
 * moves once, whoever gets there first. Returns how many tasks moved.
 */
export async function sweepTasks(sql: Sql): Promise<{ interrupted: number; expired: number }> {
  return sql.begin(async (tx) => {
    const interrupted = await tx<Moved[]>`
      update desktop_task set state = 'interrupted', prompt = null, failure_code = 'lease_lost',
        failure_message = 'the desktop stopped sending heartbeats; events it posted are kept',
        finished_at = now(), updated_at = now()
      where state = 'claimed' and lease_expires_at < now()
      returning session_id, failure_code, failure_message`;
    const expired = await tx<Moved[]>`
      update desktop_task set state = 'expired', prompt = null, finished_at = now(), updated_at = now(),
        failure_code = case when deliver_by is not null and deliver_by <= now() then 'delivery_deadline_passed' else 'runner_unavailable' end,
        failure_message = case when deliver_by is not null and deliver_by <= now()
          then 'no desktop claimed the task before its deliverBy time'
          else 'the desktop did not pick the task up in time' end
      where state = 'queued' and (claim_deadline <= now() or deliver_by <= now())
      returning session_id, failure_code, failure_message`;
    // Sessions in one order, so concurrent sweeps lock them alike.
    const bySession = new Map([...interrupted, ...expired].map((m) => [m.session_id, m]));
    for (const id of [...bySession.keys()].sort()) {
      const moved = bySession.get(id)!;
      await syncSessionState(tx, id, { lastError: { error: moved.failure_code, message: moved.failure_message } });
    }
    return { interrupted: interrupted.length, expired: expired.length };
  });
}
