import type { MemberScope } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import { syncSessionState } from "./sync-session-state.js";
import { endedClears } from "./task-row.js";
import { leaving, movedTo } from "./task-state-sql.js";
import type { Hints } from "../wake/hints.js";
import type { DialectSet } from "../dialects/dialect-set.js";

/**
 * Revokes one of the member's runners: it is marked revoked, so tokens minted before are refused on their next
 * request and its streams close at once (its hint; at the holding process's next presence flush
 * if the hint is lost); tasks waiting for it alone fail at once
 * with `runner_revoked`. A turn it is running ends as `interrupted` when its lease lapses (it can
 * no longer heartbeat). It stays revoked until its owner re-enables it (a mint does not clear it),
 * and the tokens minted before stay refused even then. Returns null when the member has no such
 * runner. Runs in a transaction.
 */
export async function revokeRunner(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  scope: MemberScope,
  runnerId: string,
): Promise<{ failedTasks: number } | null> {
  const removed = await tx`
    update desktop_runner set revoked_at = now(), tokens_not_before = now()
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and runner_id = ${runnerId}
      and revoked_at is null
    returning runner_id`;
  if (removed.length === 0) return null;
  // Every process forgets the runner's cached registration once this commits (within the cache's bound if the hint is lost).
  hints.revoke({ o: scope.organizationId, m: scope.memberId, r: runnerId });
  const failed = await tx<{ session_id: string }[]>`
    update desktop_task set state = ${movedTo(tx, "failPinned")}, ${endedClears(tx)}, failure_code = 'runner_revoked',
      failure_message = 'the desktop this was waiting for was revoked by its owner', finished_at = now(), updated_at = now()
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId}
      and pinned_runner_id = ${runnerId} and ${leaving(tx, "failPinned")}
    returning session_id`;
  for (const id of [...new Set(failed.map((t) => t.session_id))].sort()) {
    await syncSessionState(
      tx,
      hints,
      dialects,
      { organizationId: scope.organizationId, id },
      { lastError: { error: "runner_revoked", message: "the desktop this was waiting for was revoked by its owner" } },
    );
  }
  return { failedTasks: failed.length };
}

/**
 * Re-enables one of the member's revoked runners: it may mint again. The tokens minted before its
 * revocation stay refused (`tokens_not_before` is kept). Null when the member has no such runner.
 */
export async function enableRunner(sql: Queryable, scope: MemberScope, runnerId: string): Promise<{ runnerId: string; revoked: false } | null> {
  const [row] = await sql<{ runner_id: string }[]>`
    update desktop_runner set revoked_at = null
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and runner_id = ${runnerId}
    returning runner_id`;
  return row ? { runnerId: row.runner_id, revoked: false } : null;
}

/** Renames one of the member's runners; null when there is no such runner. */
export async function renameRunner(sql: Queryable, scope: MemberScope, runnerId: string, name: string): Promise<{ runnerId: string; name: string } | null> {
  const [row] = await sql<{ runner_id: string; name: string }[]>`
    update desktop_runner set name = ${name}
    where organization_id = ${scope.organizationId} and member_id = ${scope.memberId} and runner_id = ${runnerId}
    returning runner_id, name`;
  return row ? { runnerId: row.runner_id, name: row.name } : null;
}
