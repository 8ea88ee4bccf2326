import type { OfferedTarget } from "./target-catalog.js";
import type { Action } from "./parse-name.js";

/**
 * Calls shaped as OpenWork's own remote-session source takes them. OpenWork ignores body members
 * it does not know, and agents trained on it send its names: a target's other names (OpenWork's
 * `registered` for a desktop: `Target.aliases`) name that target here, and members this source has no use for (`workspaceId` on a send or a stop, a
 * misspelt name…) are set aside instead of failing the call. What was set aside is named in the result
 * (`ignored`), so a misspelt argument is still seen.
 */
export function fromOpenworkDialect(
  action: Action,
  body: unknown,
  known: ReadonlySet<string>,
  /** Each other name of a target, with the target's name. */
  targetAliases: ReadonlyMap<string, string>,
): { body: unknown; ignored: string[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { body, ignored: [] };
  const kept: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (known.has(key)) kept[key] = value;
    else ignored.push(key);
  }
  const named = typeof kept.target === "string" ? targetAliases.get(kept.target) : undefined;
  if ((action === "create" || action === "list") && named !== undefined) kept.target = named;
  return { body: kept, ignored };
}

// OpenWork's `targets` lists at most this many computers.
const OPENWORK_COMPUTERS_SHOWN = 50;

/**
 * OpenWork's members of a `targets` result, beside ours: `computers`, every offered target's
 * machines (the desktop's, already in OpenWork's shape: `computerId`, `kind`, `label`, `platform`,
 * `appVersion`, `online`, `lastSeenAt`, `workspaces`), and `cloud: { available }`, OpenWork's
 * cloud worker being the target named `cloud`. Callers written against OpenWork read these.
 */
export function openworkTargets(offered: readonly OfferedTarget[]): { computers: unknown[]; cloud: { available: boolean } } {
  const computers = offered.flatMap(({ availability }) => {
    const machines = availability.fields?.machines;
    return Array.isArray(machines) ? machines : [];
  });
  const cloud = offered.find(({ target }) => target.name === "cloud");
  // OpenWork always labels a computer: before a desktop reports its own label, its name.
  const labelled = computers.slice(0, OPENWORK_COMPUTERS_SHOWN).map((c: { label?: unknown; name?: unknown }) => ({ ...c, label: c.label ?? c.name ?? null }));
  return { computers: labelled, cloud: { available: cloud?.availability.available ?? false } };
}
