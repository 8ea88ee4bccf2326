import type { Queryable } from "@openwork/remote-session-core/internal";
import type { TaskOwner } from "./task-row.js";

/**
 * Replaces what the runner reported of itself (its workspaces, their engines and models) — the
 * latest report is the only one kept — and returns when it was recorded, or null when this
 * member has no such runner.
 */
export async function saveInventory(sql: Queryable, runner: TaskOwner, inventory: Record<string, unknown>): Promise<Date | null> {
  const [row] = await sql<{ updated: Date }[]>`
    update desktop_runner set inventory = ${sql.json(inventory as never)}, inventory_updated_at = now()
    where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and runner_id = ${runner.runnerId}
    returning inventory_updated_at as updated`;
  return row?.updated ?? null;
}
