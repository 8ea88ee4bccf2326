import type { Queryable } from "@openwork/remote-session-core/internal";
import type { CompleteRequest, CompleteResponse } from "@openwork/runner-protocol/internal";
import type { DialectSet } from "../dialects/dialect-set.js";
import { kindsToClaim } from "../runner-abilities.js";
import { type AuthenticatedRunner, asAuthenticated, readRegistration, type VerifiedRunner } from "./check-registration.js";
import { type ClaimOutcome, claimNextTask, heldTask } from "./claim-task.js";
import { answerEndsAsks } from "./asked-request.js";
import { isReplay, lockForCompletion, type SettledTask, settleTask, writeSettle } from "./complete-task.js";
import { pauseAtBudget } from "./pause-at-budget.js";
import { pipeline } from "./pipeline.js";
import { sessionKey, type TaskRow } from "./task-row.js";
import { type LiveState, writeSessionState } from "./sync-session-state.js";
import type { RegisteredRunner, TokenHolder } from "./touch-runner.js";
import { type TransactionScope, transaction } from "./transaction.js";

/**
 * Where a completion runs: the channel's database and publisher, its lease, its cap on a task's
 * events, and where its runners' registrations are read: the channel's registration cache (≤ 1 s),
 * which calls `read` (in the completion's transaction) when it holds none.
 */
export interface CompletionScope extends TransactionScope {
  readonly dialects: DialectSet;
  readonly leaseMs: number;
  readonly turnEventBytes: number;
  readonly registrations: {
    registration(holder: TokenHolder, read: () => Promise<RegisteredRunner>): Promise<RegisteredRunner>;
  };
}

/** What a completion's transaction decided, for the route to answer with. */
export interface CompletionOutcome {
  /** The runner, as its registration says now. */
  runner: AuthenticatedRunner;
  answer: CompleteResponse;
  /**
   * The runner's next task, when the body asked for one: claimed in this transaction (its
   * claim-time checks are still to run), or the one a replayed completion's first answer carried
   * and the runner still holds. Null when none.
   */
  next: ClaimOutcome | null;
}

/**
 * `POST tasks/:id/complete`, the hot path of protocol 3, as one transaction whose statements are
 * started in this order, each step after the one before it:
 *
 * 1. with BEGIN, in one round trip: the runner's registration, unless the registration cache
 *    read it lately (a revoked runner's completion is refused whole, by every process within the
 *    cache's bound: its error rolls everything back), and in one statement the task's lock with
 *    the events it holds and its session's lock with its turns;
 * 2. in one round trip (see `settleTask` for the rare ones more), two statements and COMMIT: the
 *    session's move (derived from the turns read in step 1 with this one settled: no other
 *    writer moves the session while it is locked), then the claim of the runner's next task
 *    carrying the settle itself (the events, the settled task with its fold and its link to the
 *    claimed one). The order matters: a follow-up of this session claimed next moves the
 *    session again, after this move. Without a claim asked for, the settle is a statement of its
 *    own. Every check of these statements is made inside PostgreSQL (a refusal aborts the
 *    transaction, and the COMMIT then rolls back).
 *
 * Two round trips and five statements in all, BEGIN and COMMIT counted (six when the registration
 * is read). A replay (the same body again) writes nothing and hands
 * back the task the first answer claimed, while the runner still holds it.
 */
export async function completeAndClaim(scope: CompletionScope, verified: VerifiedRunner, taskId: string, body: CompleteRequest): Promise<CompletionOutcome> {
  return transaction(scope, async (tx, hints, commit) => {
    const [registered, locked] = await pipeline([
      scope.registrations.registration(verified.holder, () => readRegistration(tx, verified)),
      lockForCompletion(tx, verified.holder, taskId, body),
    ]);
    const runner = asAuthenticated(verified, registered);
    const { task } = locked;
    if (isReplay(task, body)) {
      const held = body.next && task.next_task_id ? await heldTask(tx, runner, task.next_task_id) : null;
      return { runner, answer: { taskId, state: task.state }, next: held };
    }
    const settled = await settleTask(tx, locked, body, scope.turnEventBytes);
    const kinds = body.next ? kindsToClaim(runner, body.next.kinds) : [];
    const moved = writeSessionState(tx, hints, scope.dialects, settled.session, settled.patch, await liveAfter(tx, task, settled));
    const next =
      kinds.length > 0
        ? claimNextTask(tx, hints, runner, kinds, scope.leaseMs, { taskId, settle: settled.writes })
        : writeSettle(tx, settled.writes).then(() => null);
    // A completion that reported usage is checked against the session's budgets before it commits.
    if (!settled.patch.spent) {
      const [, claimed] = await pipeline([moved, next, commit()]);
      return { runner, answer: { taskId, state: settled.state }, next: claimed };
    }
    const [, claimed] = await pipeline([moved, next]);
    await pauseAtBudget(tx, hints, sessionKey(task));
    await commit();
    return { runner, answer: { taskId, state: settled.state }, next: claimed };
  });
}

/**
 * How a delivered answer leaves its waiting session: running on when it answered all the running
 * turn's open requests (one round trip more, for answers only). The turn's own `input.resolved`
 * may post later; the session, locked here, moves with the answer.
 */
async function liveAfter(tx: Queryable, task: TaskRow, settled: SettledTask): Promise<LiveState | undefined> {
  if (task.kind !== "remote_session.respond" || settled.state !== "done" || settled.session?.state !== "waiting_input") return undefined;
  const requestId = task.input?.requestId;
  return typeof requestId === "string" && (await answerEndsAsks(tx, sessionKey(task), requestId)) ? "running" : undefined;
}
