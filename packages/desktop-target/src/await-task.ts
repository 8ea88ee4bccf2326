import type { TaskRow } from "./store/task-row.js";
import type { TransactionScope } from "./store/transaction.js";
import type { WakeHub } from "./wake/wake-hub.js";

/** What waiting in a call for a desktop's answer needs: the store, the wake hub, how long. */
export interface TaskWaitDeps extends TransactionScope {
  hub: WakeHub;
  /** How long a call waits for the desktop's answer (the channel's `relayWaitMs`). */
  waitMs: number;
}

const FINAL_STATES = new Set(["done", "failed", "expired", "cancelled", "interrupted"]);

/** Waits (on the session's wake-ups) until the task is answered or gone; null when the wait ran out. */
export async function settled(deps: TaskWaitDeps, sessionId: string, task: TaskRow, signal: AbortSignal | undefined): Promise<TaskRow | null> {
  const deadline = Date.now() + deps.waitMs;
  for (;;) {
    const stopWaiting = new AbortController();
    const changed = deps.hub.waitForSession(
      sessionId,
      Math.max(0, deadline - Date.now()),
      signal ? AbortSignal.any([signal, stopWaiting.signal]) : stopWaiting.signal,
    );
    const [current] = await deps.sql<TaskRow[]>`select * from desktop_task where organization_id = ${task.organization_id} and id = ${task.id}`;
    if (current && FINAL_STATES.has(current.state)) {
      stopWaiting.abort();
      return current;
    }
    if (Date.now() >= deadline || signal?.aborted) {
      stopWaiting.abort();
      return null;
    }
    await changed;
  }
}
