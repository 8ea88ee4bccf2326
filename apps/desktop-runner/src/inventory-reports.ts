import { type InventoryRequest, InventoryModelSchema, LIMITS } from "@openwork/runner-protocol";
import { type RunnerClient, RunnerProtocolError, type RunnerLogger } from "@openwork/runner-protocol/client";
import type { LocalEngine } from "./local-engine.js";

/** A workspace (a project) this runner serves: the folder its sessions work in. The first is the active one. */
export interface RunnerWorkspace {
  workspaceId: string;
  name: string;
  directory: string;
}

/** What this runner has, as the gateway's inventory route takes it: each workspace with the engine and the models it knows. */
export async function inventoryOf(workspaces: readonly RunnerWorkspace[], engine: LocalEngine): Promise<InventoryRequest> {
  const known = await engine.models();
  // A model whose ids the protocol cannot carry is left out, not the whole report.
  const models = known.models.filter((m) => InventoryModelSchema.safeParse(m).success).slice(0, LIMITS.inventoryModels);
  return {
    workspaces: workspaces.slice(0, LIMITS.inventoryWorkspaces).map((w, i) => ({
      workspaceId: w.workspaceId,
      name: w.name,
      active: i === 0,
      engine: engine.engineId,
      defaultModel: known.defaultModel,
      models,
    })),
  };
}

/**
 * Reports the inventory at start and then every `intervalMs`, sent only when it changed (the
 * engine's models may). A gateway without the route (404) is not asked again; a failed report
 * is tried at the next look.
 */
export function startInventoryReports(options: {
  client: RunnerClient;
  workspaces: readonly RunnerWorkspace[];
  engine: LocalEngine;
  intervalMs: number;
  logger?: RunnerLogger;
}): { stop(): void; look(): Promise<void> } {
  let sent: string | null = null;
  let unsupported = false;
  let looking: Promise<void> | null = null;
  const report = async () => {
    const inventory = await inventoryOf(options.workspaces, options.engine);
    const text = JSON.stringify(inventory);
    if (text === sent) return;
    await options.client.putInventory(inventory);
    sent = text;
    options.logger?.info("desktop runner: inventory reported", {
      workspaces: inventory.workspaces.length,
      models: inventory.workspaces[0]?.models?.length ?? 0,
    });
  };
  const look = () => {
    if (unsupported) return Promise.resolve();
    looking ??= report()
      .catch((error: unknown) => {
        if (RunnerProtocolError.isInstance(error) && error.status === 404) unsupported = true;
        options.logger?.warn("desktop runner: inventory report failed", {
          code: RunnerProtocolError.isInstance(error) ? error.code : "unexpected",
          ...(unsupported ? { step: "this gateway takes no inventory; not sent again" } : {}),
        });
      })
      .finally(() => {
        looking = null;
      });
    return looking;
  };
  void look();
  const timer = setInterval(() => void look(), options.intervalMs);
  timer.unref?.();
  return { stop: () => clearInterval(timer), look };
}
