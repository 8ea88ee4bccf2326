import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";

/**
 * Records that a stop was asked for: the session (with `tree`, every session below it too, in
 * this one statement) starts no more sessions from now on, whatever its target still has to wind
 * down. Each row it marks is locked, so a spawn under one of them that holds the row's lock
 * commits first and is found by whoever reads the tree after this returns. A pause at a budget
 * ends: stopping is one of the two answers to it. Answers how many it marked.
 */
export async function requestStop(sql: Queryable, scope: OwnerScope, sessionId: string, options: { tree: boolean }): Promise<number> {
  const rows = await sql<{ id: string }[]>`
    with recursive tree as (
      select id, 0 as level from remote_session
      where organization_id = ${scope.organizationId} and user_id = ${scope.userId} and id = ${sessionId}
      union all
      select s.id, t.level + 1 from remote_session s join tree t on s.organization_id = ${scope.organizationId} and s.spawned_by = t.id
      where ${options.tree} and s.user_id = ${scope.userId} and t.level < 64)
    update remote_session set stop_requested_at = coalesce(stop_requested_at, now()), budget_pause = null
    where organization_id = ${scope.organizationId} and id in (select id from tree)
    returning id`;
  return rows.length;
}
