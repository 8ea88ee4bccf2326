import { z } from "zod";

// What a desktop reported of itself, read from either dialect's report (ours: strict at the
// route; OpenWork's: loose, a `computer` beside the workspaces). Read leniently: a member missing
// or malformed in a stored report is left out, never a failed create.

const ModelRefSchema = z.object({ providerId: z.string().min(1), modelId: z.string().min(1), name: z.string().optional().catch(undefined) });
const WorkspaceSchema = z.object({
  workspaceId: z.string().min(1),
  name: z.string().min(1).optional().catch(undefined),
  active: z.boolean().optional().catch(undefined),
  engine: z.string().min(1).nullish().catch(null),
  defaultModel: z
    .object({ providerId: z.string().min(1), modelId: z.string().min(1), variant: z.string().nullish() })
    .nullish()
    .catch(null),
  models: z.array(z.unknown()).optional().catch(undefined),
});
const StoredSchema = z.object({
  computer: z
    .object({ label: z.string().min(1).optional().catch(undefined) })
    .optional()
    .catch(undefined),
  workspaces: z.array(z.unknown()).optional().catch(undefined),
});

/** A model a desktop's workspace knows. */
export interface InventoryModelRef {
  providerId: string;
  modelId: string;
  name?: string;
}

/** One workspace (a project) a desktop serves. */
export interface DesktopWorkspace {
  workspaceId: string;
  name: string;
  active: boolean;
  /** The engine that runs its sessions (`opencode`; OpenWork's `v1`/`v2`), when reported. */
  engine: string | null;
  defaultModel: { providerId: string; modelId: string; variant?: string } | null;
  models: InventoryModelRef[];
}

/** What a desktop reported of itself: its label (OpenWork's) and workspaces. */
export interface DesktopInventory {
  label: string | null;
  workspaces: DesktopWorkspace[];
}

const parsedOrNull = <T>(schema: z.ZodType<T>, value: unknown): T | null => {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
};

/** The inventory stored on a runner row, or null when the desktop never reported one. */
export function inventoryOf(stored: unknown): DesktopInventory | null {
  if (stored === null || stored === undefined) return null;
  const report = parsedOrNull(StoredSchema, stored);
  if (!report) return null;
  const workspaces = (report.workspaces ?? []).flatMap((item) => {
    const w = parsedOrNull(WorkspaceSchema, item);
    if (!w) return [];
    const models = (w.models ?? []).flatMap((m) => {
      const model = parsedOrNull(ModelRefSchema, m);
      return model ? [{ providerId: model.providerId, modelId: model.modelId, ...(model.name ? { name: model.name } : {}) }] : [];
    });
    const defaultModel = w.defaultModel
      ? { providerId: w.defaultModel.providerId, modelId: w.defaultModel.modelId, ...(w.defaultModel.variant ? { variant: w.defaultModel.variant } : {}) }
      : null;
    return [{ workspaceId: w.workspaceId, name: w.name ?? w.workspaceId, active: w.active === true, engine: w.engine ?? null, defaultModel, models }];
  });
  return { label: report.computer?.label ?? null, workspaces };
}

/** The workspace `named` names: by id, else by name (any case). Several by name: all of them. */
export function workspacesNamed(inventory: DesktopInventory | null, named: string): DesktopWorkspace[] {
  const workspaces = inventory?.workspaces ?? [];
  const byId = workspaces.filter((w) => w.workspaceId === named);
  return byId.length > 0 ? byId : workspaces.filter((w) => w.name.toLowerCase() === named.toLowerCase());
}

/** The distinct engines of a desktop's workspaces. */
export function enginesOf(inventory: DesktopInventory | null): string[] {
  return [...new Set((inventory?.workspaces ?? []).flatMap((w) => (w.engine ? [w.engine] : [])))];
}

/** The distinct models of these workspaces, at most `max`. */
export function modelsOf(workspaces: readonly DesktopWorkspace[], max = 200): InventoryModelRef[] {
  const seen = new Map<string, InventoryModelRef>();
  for (const model of workspaces.flatMap((w) => w.models))
    seen.set(`${model.providerId}/${model.modelId}`, seen.get(`${model.providerId}/${model.modelId}`) ?? model);
  return [...seen.values()].slice(0, max);
}
