import type { Queryable } from "@openwork/remote-session-core/internal";
import type { RunnerIdentity } from "./task-row.js";
import { OPEN_TASK_STATES } from "../task-state.js";
import { leaving, stateIn } from "./task-state-sql.js";

/**
 * The one predicate of "this runner may take task `t` now", shared by the work listing and the
 * claim so the two can never disagree:
 * - the member's queued task, pinned to this runner or to none, still deliverable;
 * - the runner can take the task's kind and requirements, as its dialect says (ours: the version
 *   and every capability the task requires);
 * - no earlier turn of the same session is still queued or running (a session's turns run in
 *   order; a relayed read or stop never waits behind one) — but `settling`, a turn the statement
 *   itself settles, which its snapshot still sees running;
 * - anything but a create goes only to the runner holding the session.
 */
export function eligibleFor(sql: Queryable, runner: RunnerIdentity, settling?: string) {
  return sql`
    t.organization_id = ${runner.organizationId} and t.member_id = ${runner.memberId}
    and ${leaving(sql, "claim", "t.state")}
    and (t.pinned_runner_id is null or t.pinned_runner_id = ${runner.runnerId})
    and t.claim_deadline > now() and (t.deliver_by is null or t.deliver_by > now())
    and ${runner.dialect.eligibility(sql, runner)}
    and (t.kind not in ('remote_session.create', 'remote_session.send') or not exists (
      select 1 from desktop_task e
      where e.organization_id = t.organization_id and e.session_id = t.session_id and e.created_at < t.created_at and ${stateIn(sql, OPEN_TASK_STATES, "e.state")}
        and e.kind in ('remote_session.create', 'remote_session.send')${settling ? sql` and e.id <> ${settling}` : sql``}))
    and (t.kind = 'remote_session.create' or exists (
      select 1 from remote_session s where s.organization_id = t.organization_id and s.id = t.session_id and s.target_ref->>'runnerId' = ${runner.runnerId}))`;
}
