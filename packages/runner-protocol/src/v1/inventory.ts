import { z } from "zod";
import { LocalIdSchema, ModelSchema, TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";

/** An engine's id (`opencode`): lowercase, as a create names it in `engine`. */
export const EngineIdSchema = z
  .string()
  .min(1)
  .max(LIMITS.engineId)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase letters, digits, '.', '_' and '-'");

/** A model a workspace's engine knows, as the runner reports it. */
export const InventoryModelSchema = z.strictObject({
  providerId: z.string().min(1).max(LIMITS.providerId),
  modelId: z.string().min(1).max(LIMITS.modelId),
  name: z.string().min(1).max(LIMITS.modelName).optional(),
});
export type InventoryModel = z.infer<typeof InventoryModelSchema>;

/** One workspace (a project) the runner serves, with the engine that runs its sessions and the models that engine knows. */
export const InventoryWorkspaceSchema = z.strictObject({
  /** What a create names in `workspaceId` (or `workspace`); the runner's own id for it. */
  workspaceId: LocalIdSchema,
  name: z.string().trim().min(1).max(LIMITS.workspaceName),
  /** The workspace a session goes to when its create names none. At most one is active. */
  active: z.boolean().default(false),
  engine: EngineIdSchema,
  defaultModel: ModelSchema.nullable().default(null),
  models: z.array(InventoryModelSchema).max(LIMITS.inventoryModels).default([]),
});
export type InventoryWorkspace = z.infer<typeof InventoryWorkspaceSchema>;

/**
 * `PUT inventory`: what this machine has — its workspaces, their engines and models — replacing
 * what it reported before. The gateway places a create by it (a workspace named instead of a
 * machine) and checks a create's engine and model against it before anything is written. Sent at
 * start and whenever it changed. Strict, as every request.
 */
export const InventoryRequestSchema = z
  .strictObject({ workspaces: z.array(InventoryWorkspaceSchema).max(LIMITS.inventoryWorkspaces) })
  .refine((inventory) => inventory.workspaces.filter((w) => w.active).length <= 1, { message: "at most one workspace is active", path: ["workspaces"] })
  .refine((inventory) => new Set(inventory.workspaces.map((w) => w.workspaceId)).size === inventory.workspaces.length, {
    message: "workspace ids are unique",
    path: ["workspaces"],
  });
export type InventoryRequest = z.input<typeof InventoryRequestSchema>;
export type Inventory = z.infer<typeof InventoryRequestSchema>;

/** The answer to `PUT inventory`: when the gateway recorded it. Loose, like every reply. */
export const InventoryResponseSchema = z.looseObject({ updatedAt: TimestampSchema });
export type InventoryResponse = z.infer<typeof InventoryResponseSchema>;
