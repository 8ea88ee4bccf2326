import { LIMITS } from "@openwork/runner-protocol";
import { InventoryRequestSchema } from "@openwork/runner-protocol/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import { saveInventory } from "../store/save-inventory.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { readJsonBody } from "./read-json-body.js";
import type { RouteContext } from "./route-context.js";
import { json, parseOrRefuse } from "./to-response.js";

/** `PUT inventory`: what the runner has now (workspaces, engines, models), replacing its last report. */
export async function handleInventory(ctx: RouteContext, runner: RunnerIdentity, request: Request): Promise<Response> {
  const inventory = parseOrRefuse(InventoryRequestSchema, await readJsonBody(request));
  if (JSON.stringify(inventory).length > LIMITS.inventoryBytes) {
    throw new ChannelRefusal("payload_too_large", `an inventory is limited to ${LIMITS.inventoryBytes} bytes of JSON`);
  }
  const updated = await saveInventory(ctx.sql, runner, inventory);
  // The registration was checked by the token's verification a moment ago: only a revocation in between gets here.
  if (!updated) throw new ChannelRefusal("runner_unauthorized", "runner token refused: runner not registered or revoked");
  ctx.logger.info("desktop runner: inventory recorded", { runnerId: runner.runnerId, workspaces: inventory.workspaces.length });
  return json(200, { updatedAt: updated.toISOString() });
}
