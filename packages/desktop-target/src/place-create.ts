import type { Model } from "@openwork/remote-session-core";
import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import { chooseRunner, pinned } from "./choose-runner.js";
import { fail } from "./desktop-errors.js";
import { type DesktopInventory, type DesktopWorkspace, inventoryOf, modelsOf, workspacesNamed } from "./inventory.js";
import { runnerCanTake } from "./runner-abilities.js";
import type { RunnerRow } from "./store/runner-row.js";
import type { Dialect } from "./dialects/dialect.js";

type Candidate = RunnerRow & { online: boolean; speaks: Dialect };

/** What a create asks of where it runs. */
export interface PlacementAsk {
  /** A desktop's computerId or name. */
  pin?: string;
  /** A workspace (a project) by id or name, on whichever desktop has it. */
  workspace?: string;
  /** A workspace by its exact id (OpenWork's argument): kept as given for a desktop that never reported what it has. */
  workspaceId?: string;
  /** The engine the session runs on: the chosen workspace's must be it. */
  engine?: string;
  model?: Model;
  storeAndForward: boolean;
}

/** The desktop a create goes to (null: whichever able one comes first) and the workspace it runs in (null: the desktop's active one). */
export interface Placement {
  runner: RunnerRow | null;
  workspaceId: string | null;
}

/**
 * Where a new session runs, checked before anything is written. A workspace or an engine places
 * it on a desktop that reported having it — online and able first, then the most recently seen —
 * and a model must be one the chosen desktop reported for that workspace. Refusals list what
 * there is to choose from: `unknown_workspace` and `unknown_engine` each desktop with its
 * workspaces, `ambiguous_workspace` the workspaces of that name, `model_unavailable` that
 * desktop's models; besides `chooseRunner`'s.
 */
export function placeCreate(runners: Candidate[], task: { kind: "remote_session.create"; requirements: TaskRequirements }, ask: PlacementAsk): Placement {
  const named = ask.workspace ?? ask.workspaceId;
  const pool = ask.pin === undefined ? runners : [pinned(runners, ask.pin)];
  const placed = named === undefined && ask.engine === undefined ? null : placeByInventory(pool, task, ask, named);
  if (placed === null) {
    // Nothing to look up, or a workspace id for a desktop that never said what it has: as before.
    const runner = chooseRunner(runners, task, { ...(ask.pin === undefined ? {} : { pin: ask.pin }), storeAndForward: ask.storeAndForward });
    checkModel(runner, null, ask.model);
    return { runner, workspaceId: named ?? null };
  }
  const runner = chooseRunner([placed.runner], task, { pin: placed.runner.runner_id, storeAndForward: ask.storeAndForward });
  checkModel(runner, placed.workspace, ask.model);
  return { runner, workspaceId: placed.workspace?.workspaceId ?? null };
}

/** The desktop and workspace the inventories offer for the ask, or null to place it as before (a workspace id no reported inventory has, among desktops that never reported). */
function placeByInventory(
  pool: Candidate[],
  task: { kind: "remote_session.create"; requirements: TaskRequirements },
  ask: PlacementAsk,
  named: string | undefined,
): { runner: Candidate; workspace: DesktopWorkspace | null } | null {
  if (ask.workspace !== undefined && ask.workspaceId !== undefined && !sameWorkspace(pool, ask.workspace, ask.workspaceId)) {
    fail("invalid_capability_arguments", "workspace and workspaceId name different workspaces: give one");
  }
  const offers = pool.flatMap((runner) => {
    const workspace = workspaceOn(runner, inventoryOf(runner.inventory), named, ask.engine);
    return workspace === undefined ? [] : [{ runner, workspace }];
  });
  const able = (r: Candidate) => runnerCanTake(r.speaks, r, task.kind, task.requirements);
  const offer = offers.find((o) => o.runner.online && able(o.runner)) ?? offers.find((o) => o.runner.online) ?? offers[0];
  if (offer) return offer;
  // A workspace id may be on a desktop that never said what it has: it is told, as before.
  if (ask.workspace === undefined && ask.engine === undefined && pool.some((r) => inventoryOf(r.inventory) === null)) return null;
  const computers = pool.map(described);
  if (named !== undefined && !pool.some((r) => workspacesNamed(inventoryOf(r.inventory), named).length > 0)) {
    const where = ask.pin === undefined ? "no desktop of yours has" : `${pool[0]!.name} has no`;
    return fail("unknown_workspace", `${where} a workspace called "${named}"`, { context: { target: "desktop", computers } });
  }
  const on = named === undefined ? "" : ` for workspace "${named}"`;
  return fail("unknown_engine", `no desktop of yours runs engine "${ask.engine}"${on}`, { context: { target: "desktop", computers } });
}

/**
 * The workspace of this desktop that fits: the one `named` names (with the engine asked, if any),
 * else for an engine its active workspace running it, else its first one running it; null when
 * nothing is asked of the workspace; undefined when none fits.
 */
function workspaceOn(
  runner: Candidate,
  inventory: DesktopInventory | null,
  named: string | undefined,
  engine: string | undefined,
): DesktopWorkspace | null | undefined {
  if (named !== undefined) {
    const matches = workspacesNamed(inventory, named).filter((w) => engine === undefined || w.engine === engine);
    if (matches.length > 1) {
      return fail("ambiguous_workspace", `${runner.name} has ${matches.length} workspaces called "${named}"; name one by its workspaceId`, {
        context: { target: "desktop", computerId: runner.runner_id, workspaces: matches.map(({ workspaceId, name }) => ({ workspaceId, name })) },
      });
    }
    return matches[0];
  }
  if (engine === undefined) return null;
  const running = (inventory?.workspaces ?? []).filter((w) => w.engine === engine);
  return running.find((w) => w.active) ?? running[0];
}

function sameWorkspace(pool: Candidate[], workspace: string, workspaceId: string): boolean {
  if (workspace === workspaceId) return true;
  return pool.some((r) => workspacesNamed(inventoryOf(r.inventory), workspace).some((w) => w.workspaceId === workspaceId));
}

/** A model the chosen desktop did not report for the workspace (its active one when none is named) is refused with the ones it did. */
function checkModel(runner: RunnerRow | null, workspace: DesktopWorkspace | null, model: Model | undefined): void {
  const inventory = runner ? inventoryOf(runner.inventory) : null;
  if (!runner || !inventory || !model) return;
  const active = inventory.workspaces.filter((w) => w.active);
  const scope = workspace ? [workspace] : active.length > 0 ? active : inventory.workspaces;
  const models = modelsOf(scope);
  // A desktop that reported no models for it cannot be checked: its engine decides.
  if (models.length === 0 || models.some((m) => m.providerId === model.providerId && m.modelId === model.modelId)) return;
  const where = workspace ? ` in workspace "${workspace.name}"` : "";
  fail("model_unavailable", `${runner.name} has no model ${model.providerId}/${model.modelId}${where}`, {
    context: {
      target: "desktop",
      computerId: runner.runner_id,
      ...(workspace ? { workspaceId: workspace.workspaceId } : {}),
      models: models.map(({ providerId, modelId, name }) => ({ providerId, modelId, ...(name ? { name } : {}) })),
    },
  });
}

/** A desktop with what it reported, as a refusal lists it: null workspaces for one that never reported. */
function described(runner: Candidate) {
  const inventory = inventoryOf(runner.inventory);
  return {
    computerId: runner.runner_id,
    name: runner.name,
    online: runner.online,
    workspaces: inventory ? inventory.workspaces.map(({ workspaceId, name, engine }) => ({ workspaceId, name, engine })) : null,
  };
}
