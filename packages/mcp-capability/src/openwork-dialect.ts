import type { Action } from "./parse-name.js";

/**
 * Calls shaped as OpenWork's own remote-session source takes them. OpenWork ignores body members
 * it does not know, and agents trained on it send its names: its `registered` target is a
 * desktop here, and members this source has no use for (`workspaceId` on a send, `commandId` on
 * a read…) are set aside instead of failing the call. What was set aside is named in the result
 * (`ignored`), so a misspelt argument is still seen.
 */
export function fromOpenworkDialect(
  action: Action,
  body: unknown,
  known: ReadonlySet<string>,
  targetNames: readonly string[],
): { body: unknown; ignored: string[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { body, ignored: [] };
  const kept: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (known.has(key)) kept[key] = value;
    else ignored.push(key);
  }
  // OpenWork's name for a desktop registered to the member (a runner that keeps its sessions).
  if ((action === "create" || action === "list") && kept.target === "registered" && targetNames.includes("desktop")) kept.target = "desktop";
  return { body: kept, ignored };
}
