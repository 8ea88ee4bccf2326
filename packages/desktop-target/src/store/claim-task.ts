import type { Queryable } from "@openwork/remote-session-core/internal";
import type { PendingQuery, Row } from "postgres";
import { ChannelRefusal } from "../channel-refusal.js";
import { type SettleWrites, settleCtes } from "./complete-task.js";
import { eligibleFor } from "./eligibility.js";
import type { Hints } from "../wake/hints.js";
import { claimedSessionMove } from "./sync-session-state.js";
import type { RunnerIdentity, TaskKind, TaskRow } from "./task-row.js";
import { movedTo } from "./task-state-sql.js";

export type ClaimOutcome =
  /** `more`: a claim-next saw another task of the kinds asked still waiting for this runner (as of the claim's snapshot). */
  | {
      kind: "claimed";
      task: TaskRow;
      localSessionId: string | null;
      more?: boolean;
      /** The session's owner and spawn depth, read in the claim's statement (what its engine's MCP entry is issued for). */
      owner?: { userId: string; depth: number };
    }
  /** The runner asked again for a task it already holds (its first answer was lost). */
  | { kind: "replayed"; task: TaskRow; localSessionId: string | null };

/**
 * The task a claim-next follows: the one whose completion asked for it. The claim remembers
 * itself there (`next_task_id`), so a replayed completion hands over the same task. With
 * `settle`, that completion's own writes travel in the claim's statement.
 */
export interface ClaimAfter {
  taskId: string;
  settle?: SettleWrites;
}

/**
 * Claims one task for a runner. The candidate is locked `for update skip locked`, so concurrent
 * claimers never wait on each other and never both win. Runs in a transaction; refusals throw.
 */
export async function claimTask(tx: Queryable, hints: Hints, runner: RunnerIdentity, taskId: string, leaseMs: number): Promise<ClaimOutcome> {
  const claimed = await takeCandidate(tx, hints, runner, leaseMs, tx`t.id = ${taskId}`);
  return claimed ?? explainRefusal(tx, runner, taskId);
}

/**
 * Claims the oldest task the runner may take now, of `kinds` (protocol 3's `claim-next`): the
 * same predicate as the work listing, locked `for update skip locked` so candidates other runners
 * are taking are passed over instead of fought for. Null when there is none. Runs in a transaction.
 * Only a claim that follows nothing says whether more waits (`more`): the claim-next answer
 * carries it, a completion's does not, and the check is a second walk of the same predicate.
 */
export async function claimNextTask(
  tx: Queryable,
  hints: Hints,
  runner: RunnerIdentity,
  kinds: readonly TaskKind[],
  leaseMs: number,
  after?: ClaimAfter,
): Promise<ClaimOutcome | null> {
  const ofKinds = tx`t.kind = any(${kinds as string[]}::text[])`;
  return takeCandidate(tx, hints, runner, leaseMs, tx`${ofKinds} order by t.created_at limit 1`, after, after ? undefined : ofKinds);
}

/** Claims the first eligible task `where` picks, and moves its session: one statement. */
async function takeCandidate(
  tx: Queryable,
  hints: Hints,
  runner: RunnerIdentity,
  leaseMs: number,
  where: PendingQuery<Row[]>,
  after?: ClaimAfter,
  /** Also say whether another task this predicate picks still waits (the runner then asks again at once). */
  moreOf?: PendingQuery<Row[]>,
): Promise<ClaimOutcome | null> {
  // Read in the claim's own snapshot, where the claimed row still looks queued: it is left out by id.
  // The statement is handed to the connection now (`execute`), not when awaited: a statement the
  // caller starts after this call, a COMMIT above all, runs after it.
  // A settle written by this statement is not seen by its reads: they leave that task out by id.
  const eligible = eligibleFor(tx, runner, after?.settle ? after.taskId : undefined);
  const more = moreOf ? tx`exists (select 1 from desktop_task t where ${eligible} and ${moreOf} and t.id <> c.id)` : tx`null::boolean`;
  const [row] = await tx<ClaimedRow[]>`
    with candidate as (
      select t.id from desktop_task t
      where ${eligible} and ${where}
      for update skip locked),
    claimed as (
      update desktop_task d set
        state = ${movedTo(tx, "claim")}, attempt = d.attempt + 1, claimed_by_runner_id = ${runner.runnerId}, claimed_via = ${runner.dialect.name},
        lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), claimed_at = now(), updated_at = now()
      -- The candidate's id as a value, not a join: a point lookup on the key under any plan (a
      -- generic plan built on small statistics joined it by walking the organization's tasks).
      where d.organization_id = ${runner.organizationId} and d.id = (select id from candidate)
      returning d.*),
    ${after?.settle ? tx`${settleCtes(tx, after.settle, tx`(select id from claimed)`)},` : remembered(tx, runner, after?.taskId)}
    ${claimedSessionMove(tx, runner)}
    select c.*, m.target_session_id as moved_target_session_id, m.id is not null as session_moved, ${more} as more_waiting,
      o.user_id as session_user_id, o.spawn_depth as session_depth
    from claimed c left join moved m on true
    left join remote_session o on o.organization_id = c.organization_id and o.id = c.session_id
    where remote_session_required(m.id is not null or c.kind not in ('remote_session.create', 'remote_session.send'),
      'desktop session ' || c.session_id || ': the ledger refused a claimed turn''s move to running')`.execute();
  if (!row) return null;
  const {
    moved_target_session_id: movedTarget,
    session_moved: moved,
    more_waiting: moreWaiting,
    session_user_id: userId,
    session_depth: depth,
    ...claimed
  } = row;
  // A turn moves its session to running (else the statement failed inside PostgreSQL: a
  // completion's COMMIT travels with its claim); a relayed read or stop, or an answer, never does.
  if (moved) hints.session(claimed.organization_id, claimed.session_id);
  const owner = userId === null ? {} : { owner: { userId, depth } };
  return {
    kind: "claimed",
    task: claimed,
    localSessionId: claimed.local_session_id ?? movedTarget,
    ...owner,
    ...(moreWaiting === null ? {} : { more: moreWaiting }),
  };
}

/** The claim's link on the task it follows, when that task's settle is not in the statement (none: no row). */
const remembered = (tx: Queryable, runner: RunnerIdentity, after: string | undefined) => tx`
  remembered as (
    update desktop_task set next_task_id = (select id from claimed)
    where organization_id = ${runner.organizationId} and id = ${after ?? null} and exists (select 1 from claimed)),`;

/** A claimed task with what its session's move answered, and whether more waits (null: not asked). */
type ClaimedRow = TaskRow & {
  moved_target_session_id: string | null;
  session_moved: boolean;
  more_waiting: boolean | null;
  session_user_id: string | null;
  session_depth: number;
};

async function explainRefusal(tx: Queryable, runner: RunnerIdentity, taskId: string): Promise<ClaimOutcome> {
  const task = await findOwnTask(tx, runner, taskId);
  // Another member's task, or one pinned to another runner, is not this runner's business at all.
  if (!task || (task.pinned_runner_id !== null && task.pinned_runner_id !== runner.runnerId)) {
    throw new ChannelRefusal("not_found", "no such task");
  }
  if (isHeldBy(task, runner)) return { kind: "replayed", task, localSessionId: task.local_session_id ?? task.bound };
  const missing = task.required_capabilities.filter((c) => !runner.capabilities.includes(c));
  if (task.state === "queued" && (missing.length > 0 || task.required_protocol > runner.protocolVersion)) {
    throw new ChannelRefusal("runner_update_required", "this runner lacks what the task needs", { missing });
  }
  throw new ChannelRefusal("claim_conflict", `the task is not claimable (${task.state})`);
}

/**
 * A task this runner claimed and still holds, as its claim answered it (`replayed`), else null:
 * what a replayed completion hands back as its next task. Reads only: one statement.
 */
export async function heldTask(tx: Queryable, runner: RunnerIdentity, taskId: string): Promise<ClaimOutcome | null> {
  const task = await findOwnTask(tx, runner, taskId);
  return task && isHeldBy(task, runner) ? { kind: "replayed", task, localSessionId: task.local_session_id ?? task.bound } : null;
}

/** One of the member's tasks, with the local session its remote session is bound to. */
async function findOwnTask(tx: Queryable, runner: RunnerIdentity, taskId: string): Promise<(TaskRow & { bound: string | null }) | undefined> {
  const [task] = await tx<(TaskRow & { bound: string | null })[]>`
    select t.*, s.target_session_id as bound from desktop_task t join remote_session s on s.organization_id = t.organization_id and s.id = t.session_id
    where t.id = ${taskId} and t.organization_id = ${runner.organizationId} and t.member_id = ${runner.memberId}`;
  return task;
}

const isHeldBy = (task: TaskRow, runner: RunnerIdentity) => task.state === "claimed" && task.claimed_by_runner_id === runner.runnerId;
