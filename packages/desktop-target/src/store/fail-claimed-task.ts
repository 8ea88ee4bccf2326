import type { Queryable } from "@openwork/remote-session-core/internal";
import { syncSessionState } from "./sync-session-state.js";
import { endedClears, type RowKey, sessionKey } from "./task-row.js";
import { leaving, movedTo } from "./task-state-sql.js";
import type { Hints } from "../wake/hints.js";
import type { DialectSet } from "../dialects/dialect-set.js";

/** Why a task whose model the member may no longer use fails at claim. */
export const MODEL_ACCESS_LOST = { code: "model_access_lost", message: "the member may no longer use the requested model" } as const;

/**
 * Fails a task at claim time for a reason the gateway found (model access lost, no local session
 * to follow up in). The cause is recorded on the task and as the session's last error.
 */
export async function failClaimedTask(
  tx: Queryable,
  hints: Hints,
  dialects: DialectSet,
  task: RowKey,
  cause: { code: string; message: string },
): Promise<void> {
  const [failed] = await tx<{ organization_id: string; session_id: string }[]>`
    update desktop_task set state = ${movedTo(tx, "fail")}, ${endedClears(tx)}, failure_code = ${cause.code},
      failure_message = ${cause.message}, finished_at = now(), updated_at = now()
    where organization_id = ${task.organizationId} and id = ${task.id} and ${leaving(tx, "fail")}
    returning organization_id, session_id`;
  if (!failed) return;
  await syncSessionState(tx, hints, dialects, sessionKey(failed), { lastError: { error: cause.code, message: cause.message } });
}
