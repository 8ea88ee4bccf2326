import type { MemberScope } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import { seenAt } from "./replica-presence.js";
import type { SeenRunnerRow } from "./runner-row.js";

/** The member's runners, most recently seen first. */
export async function listRunners(sql: Queryable, scope: MemberScope): Promise<SeenRunnerRow[]> {
  return sql<SeenRunnerRow[]>`
    select r.*, ${seenAt(sql, "r")} as seen_at from desktop_runner r
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and revoked_at is null
    order by seen_at desc, runner_id
    limit 100`;
}
