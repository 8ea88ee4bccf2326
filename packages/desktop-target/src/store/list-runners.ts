import type { MemberScope } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { RunnerRow } from "./runner-row.js";

/** The member's runners, most recently seen first. */
export async function listRunners(sql: Queryable, scope: MemberScope): Promise<RunnerRow[]> {
  return sql<RunnerRow[]>`
    select * from desktop_runner
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and revoked_at is null
    order by last_seen_at desc, runner_id
    limit 100`;
}
