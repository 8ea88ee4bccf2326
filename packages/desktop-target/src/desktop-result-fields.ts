import type { ResultFields } from "@openwork/remote-session-core/internal";
import { enginesOf, inventoryOf, modelsOf } from "./inventory.js";
import type { RunnerPresence } from "./presence.js";
import type { RunnerRow } from "./store/runner-row.js";

/** The members the desktop target adds to its results, beside the core's. */
export const DESKTOP_RESULT_FIELDS = {
  create: {
    commandId: "The create's command id (OpenWork's receipt): read and stop take it in place of sessionId.",
    runner: "The desktop the session went to ({ runnerId, name }), when it is pinned to one.",
    expiresAt: "Store-and-forward deadline: the task expires if no desktop takes it by then.",
  },
  send: {
    requestId: "The follow-up's request id (OpenWork's receipt): read and stop take it in place of sessionId.",
  },
  read: {
    waitingFor: "A queued session: the desktop its next turn is pinned to, and the deadline.",
    deferred: "The OpenWork desktop had not answered the read within the call: read again with this cursor.",
  },
  targets: {
    machines:
      "Each of the member's desktops ({ computerId, kind, appVersion, name, platform, online, lastSeenAt, label, workspaces, engines, models, inventoryUpdatedAt }): " +
      "workspaces [{ workspaceId, name, active, engine, defaultModel }] (null until the desktop reported what it has), " +
      "the engines and models it reported. create takes a workspace (or project) instead of a desktop, and an engine and model of that desktop.",
  },
} as const satisfies ResultFields;

/**
 * Other names callers give an argument: OpenWork's `computerId` and the proposal's `runnerId` for
 * `runner`; `project` (Zeron's word) for `workspace`.
 */
export const DESKTOP_ARGUMENT_ALIASES = { runnerId: "runner", computerId: "runner", project: "workspace" } as const;

/** A desktop's inventory as `targets` shows it: null members for a desktop that never reported one. */
function shownInventory(row: RunnerRow | undefined) {
  const inventory = inventoryOf(row?.inventory);
  if (!inventory) return { label: null, workspaces: null, engines: null, models: null, inventoryUpdatedAt: null };
  return {
    label: inventory.label,
    workspaces: inventory.workspaces.map(({ workspaceId, name, active, engine, defaultModel }) => ({ workspaceId, name, active, engine, defaultModel })),
    engines: enginesOf(inventory),
    models: modelsOf(inventory.workspaces),
    inventoryUpdatedAt: row?.inventory_updated_at?.toISOString() ?? null,
  };
}

/** The capability of an OpenWork desktop that keeps a recovery journal (OpenWork shows it as `registered`). */
export const RECOVERY = "remote_session_recovery_v1";

/** OpenWork's members of a computer: its kind and the app version it registered with. */
function openworkMembers(row: RunnerRow | undefined) {
  return { kind: row?.capabilities.includes(RECOVERY) ? "registered" : "desktop", appVersion: row?.app_version ?? null };
}

/** The member's desktops as `targets` shows them, with what each reported it has: OpenWork names a desktop's id `computerId`. */
export const asComputers = (machines: readonly RunnerPresence[], rows: readonly RunnerRow[] = []) =>
  machines.map(({ runnerId, ...m }) => {
    const row = rows.find((r) => r.runner_id === runnerId);
    return { computerId: runnerId, ...openworkMembers(row), ...m, ...shownInventory(row) };
  });
