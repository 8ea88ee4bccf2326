import { createSessionLedger } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { Hints } from "../wake/hints.js";
import { requestRunningStop } from "./cancel-session-tasks.js";
import { sessionRunningTime } from "./session-running-time.js";
import type { RowKey } from "./task-row.js";

/**
 * A budgeted session's spend (its usage, and its running time so far) checked at each post: one
 * that reached a budget pauses the session, in the transaction that stored the spend. While a
 * pause is open — this post's or an earlier one — the running turn is asked to stop (a follow-up
 * queued before the pause, claimed since, stops at its first post). A retried post stores
 * nothing again, so it pauses nothing again. Answers whether it asked a running turn to stop.
 */
export async function pauseAtBudget(tx: Queryable, hints: Hints, session: RowKey): Promise<boolean> {
  const ledger = createSessionLedger(tx);
  const [row] = await tx<{ budgeted: boolean; paused: boolean }[]>`
    select budgeted, budget_pause is not null as paused from remote_session where organization_id = ${session.organizationId} and id = ${session.id}`;
  if (!row?.budgeted) return false;
  await ledger.update(session, { spentAtLeast: await sessionRunningTime(tx, session) });
  const pause = await ledger.pauseOverBudget(session);
  if (!pause && !row.paused) return false;
  const stopped = await requestRunningStop(tx, hints, session);
  // Nothing ran when it paused: raising the budget resumes nothing.
  if (pause && !stopped) await ledger.pauseFoundIdle(session, pause.id);
  return stopped;
}
