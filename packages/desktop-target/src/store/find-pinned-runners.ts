import type { MemberScope } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import { seenAt } from "./replica-presence.js";
import type { SeenRunnerRow } from "./runner-row.js";

/** The member's runners a pin may mean: the one with that id, else those with that name (any case). */
export async function findPinnedRunners(sql: Queryable, scope: MemberScope, pin: string): Promise<SeenRunnerRow[]> {
  return sql<SeenRunnerRow[]>`
    select r.*, ${seenAt(sql, "r")} as seen_at from desktop_runner r
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and revoked_at is null
      and (runner_id = ${pin} or lower(name) = lower(${pin}))
    order by (runner_id = ${pin}) desc, seen_at desc
    limit 10`;
}
