import type { Queryable } from "@openwork/remote-session-core";
import { statesLeadingTo } from "@openwork/remote-session-core";
import { notifySession } from "./notify-session.js";

/**
 * One sweep: attempts whose lease lapsed become `interrupted` (their events stay), and queued
 * tasks past `deliverBy` or their claim deadline become `expired` with a cause. Each statement is
 * one atomic update guarded by the task's state, so sweepers on several replicas never clash:
 * a row moves once, whoever gets there first. Returns how many tasks moved.
 */
export async function sweepTasks(sql: Queryable): Promise<{ interrupted: number; expired: number }> {
  const interrupted = await sql<{ session_id: string }[]>`
    with lost as (
      update desktop_task set state = 'interrupted', prompt = null, failure_code = 'lease_lost',
        failure_message = 'the desktop stopped sending heartbeats; events it posted are kept',
        finished_at = now(), updated_at = now()
      where state = 'claimed' and lease_expires_at < now()
      returning session_id, failure_code, failure_message)
    update remote_session s set state = 'interrupted', updated_at = now(),
      last_error = jsonb_build_object('error', lost.failure_code, 'message', lost.failure_message)
    from lost where s.id = lost.session_id and s.state = any(${statesLeadingTo("interrupted")}::text[])
    returning s.id as session_id`;

  const expired = await sql<{ session_id: string }[]>`
    with missed as (
      update desktop_task set state = 'expired', prompt = null, finished_at = now(), updated_at = now(),
        failure_code = case when deliver_by is not null and deliver_by <= now() then 'delivery_deadline_passed' else 'runner_unavailable' end,
        failure_message = case when deliver_by is not null and deliver_by <= now()
          then 'no desktop claimed the task before its deliverBy time'
          else 'the desktop did not pick the task up in time' end
      where state = 'queued' and (claim_deadline <= now() or deliver_by <= now())
      returning session_id, kind, failure_code, failure_message)
    update remote_session s set updated_at = now(),
      -- A follow-up that was never delivered leaves its session as it was: ready, with the cause.
      state = case when missed.kind = 'remote_session.create' then 'expired' else 'idle' end,
      last_error = jsonb_build_object('error', missed.failure_code, 'message', missed.failure_message)
    from missed where s.id = missed.session_id and s.state = 'queued'
    returning s.id as session_id`;

  for (const { session_id } of [...interrupted, ...expired]) await notifySession(sql, session_id);
  return { interrupted: interrupted.length, expired: expired.length };
}
