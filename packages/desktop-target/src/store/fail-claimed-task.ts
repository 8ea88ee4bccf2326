import type { Queryable } from "@openwork/remote-session-core";
import { syncSessionState } from "./sync-session-state.js";

/**
 * Fails a task at claim time for a reason the gateway found (model access lost, no local session
 * to follow up in). The cause is recorded on the task and as the session's last error.
 */
export async function failClaimedTask(tx: Queryable, taskId: string, cause: { code: string; message: string }): Promise<void> {
  const [task] = await tx<{ session_id: string }[]>`
    update desktop_task set state = 'failed', prompt = null, failure_code = ${cause.code},
      failure_message = ${cause.message}, finished_at = now(), updated_at = now()
    where id = ${taskId} and state = 'claimed'
    returning session_id`;
  if (!task) return;
  await syncSessionState(tx, task.session_id, { lastError: { error: cause.code, message: cause.message } });
}
