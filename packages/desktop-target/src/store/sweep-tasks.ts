import { errorFacts, type Logger, silentLogger } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { Hints } from "../wake/hints.js";
import { DEFAULT_DESKTOP_TIMINGS, describeWindow } from "../desktop-timings.js";
import type { DialectSet } from "../dialects/dialect-set.js";
import { transaction, type TransactionScope } from "./transaction.js";
import { syncSessionState } from "./sync-session-state.js";
import { endedClears, sessionKey } from "./task-row.js";
import { leaving, movedTo } from "./task-state-sql.js";
import { seenAt } from "./replica-presence.js";

interface Moved {
  session_id: string;
  organization_id: string;
  kind: string;
  failure_code: string;
  failure_message: string;
}

/** Why a turn on a desktop seen by its polls (it holds no lease), unseen for the presence window, is `interrupted`. */
const lostCause = (presenceWindowMs: number) => ({
  failure_code: "desktop_lost",
  failure_message: `the desktop has not been seen for ${describeWindow(presenceWindowMs)}; the turn may still finish when it is back`,
});

// Rows one sweep moves at most per kind: a backlog drains over a few sweeps instead of one long
// transaction. The candidates come from partial indexes on live rows (queued by deadline, claimed
// by claim time), so a sweep's cost follows the live work, not the table.
const SWEEP_BATCH = 500;

/**
 * One sweep: attempts whose lease lapsed become `interrupted` (their events stay), and queued
 * tasks past their claim deadline (which is `deliverBy` when the task has one) become `expired`
 * with a cause; each session touched gets its state derived again. The database clock decides
 * every deadline. Candidates are locked `skip locked` and each move is guarded by its state, so
 * sweepers on several replicas never clash: a row moves once, whoever gets there first. One
 * session that cannot be updated never stalls the sweep (`deriveAlone`). A turn on a desktop
 * seen by its polls (no lease) is lost once its desktop was unseen for `presenceWindowMs` (default: the
 * channel's default). Returns how many tasks moved.
 */
export async function sweepTasks(
  scope: TransactionScope & { readonly dialects: DialectSet },
  options: { presenceWindowMs?: number; logger?: Logger } = {},
): Promise<{ interrupted: number; expired: number }> {
  const logger = options.logger ?? silentLogger;
  const presenceWindowMs = options.presenceWindowMs ?? DEFAULT_DESKTOP_TIMINGS.presenceWindowMs;
  const lost = lostCause(presenceWindowMs);
  const { dialects } = scope;
  return transaction(scope, async (tx, hints) => {
    // The sweep spans every organization by design: on a sharded database these are multi-shard
    // statements, each row named by its full key.
    const interrupted = await tx<Moved[]>`
      /* across organizations: the lease sweep */
      update desktop_task set state = ${movedTo(tx, "interrupt")}, ${endedClears(tx)}, failure_code = 'lease_lost',
        failure_message = 'the desktop stopped sending heartbeats; events it posted are kept',
        finished_at = now(), updated_at = now()
      where (organization_id, id) in (
        select organization_id, id from desktop_task where ${leaving(tx, "interrupt")} and lease_expires_at < now()
        limit ${SWEEP_BATCH} for update skip locked)
        and ${leaving(tx, "interrupt")}
      returning session_id, organization_id, kind, failure_code, failure_message`;
    const expired = await tx<Moved[]>`
      /* across organizations: the deadline sweep */
      update desktop_task set state = ${movedTo(tx, "expire")}, ${endedClears(tx)}, finished_at = now(), updated_at = now(),
        failure_code = case when deliver_by is not null and deliver_by <= now() then 'delivery_deadline_passed' else 'runner_unavailable' end,
        failure_message = case when deliver_by is not null and deliver_by <= now()
          then 'no desktop claimed the task before its deliverBy time'
          when kind = 'remote_session.send'
          then 'the desktop did not pick the follow-up up in time, so its prompt never ran; send it again once the desktop is back'
          else 'the desktop did not pick the task up in time' end
      where (organization_id, id) in (
        select organization_id, id from desktop_task where ${leaving(tx, "expire")} and claim_deadline <= now()
        order by claim_deadline limit ${SWEEP_BATCH} for update skip locked)
        and ${leaving(tx, "expire")}
      returning session_id, organization_id, kind, failure_code, failure_message`;
    // A desktop seen by its polls holds no lease: a delivered turn whose desktop stopped polling is lost.
    const unseen = await tx<Moved[]>`
      /* across organizations: the presence sweep */
      update desktop_task c set progress = coalesce(c.progress, '{}'::jsonb) || '{"status":"lost"}'::jsonb, updated_at = now()
      from desktop_runner r
      where c.kind = 'remote_session.create' and ${leaving(tx, "report", "c.state")} and c.claimed_via = any(${dialects.polling}::text[])
        and coalesce(c.progress->>'status', 'running') in ('running', 'waiting')
        and r.organization_id = c.organization_id and r.member_id = c.member_id and r.runner_id = c.claimed_by_runner_id
        and ${seenAt(tx, "r")} < now() - make_interval(secs => ${presenceWindowMs / 1000})
      returning c.session_id, c.organization_id, c.kind, ${lost.failure_code} as failure_code, ${lost.failure_message} as failure_message`;
    // Sessions in one order, so concurrent sweeps lock them alike.
    const bySession = new Map([...interrupted, ...expired, ...unseen].map((m) => [`${m.organization_id}\u0000${m.session_id}`, m]));
    for (const key of [...bySession.keys()].sort()) await deriveAlone(tx, hints, dialects, bySession.get(key)!, logger);
    return { interrupted: interrupted.length + unseen.length, expired: expired.length };
  });
}

/**
 * Derives one touched session again, in a savepoint: a session that cannot be updated fails
 * alone and is logged (once: its task has moved, so no later sweep picks it again), and the
 * sweep goes on with every other organization's work.
 */
async function deriveAlone(tx: Queryable, hints: Hints, dialects: DialectSet, moved: Moved, logger: Logger): Promise<void> {
  // A relayed read or stop that lapsed wakes its waiter and leaves the session as it is.
  if (moved.kind === "remote_session.read" || moved.kind === "remote_session.stop") {
    hints.session(moved.organization_id, moved.session_id);
    return;
  }
  await tx`savepoint sweep_session`;
  try {
    await syncSessionState(tx, hints, dialects, sessionKey(moved), { lastError: { error: moved.failure_code, message: moved.failure_message } });
    await tx`release savepoint sweep_session`;
  } catch (error) {
    await tx`rollback to savepoint sweep_session`;
    logger.error("desktop sweeper: a session could not be updated; its task moved, the sweep goes on", {
      organizationId: moved.organization_id,
      sessionId: moved.session_id,
      cause: moved.failure_code,
      error: errorFacts(error),
    });
  }
}
