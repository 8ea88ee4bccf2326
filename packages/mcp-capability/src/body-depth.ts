/**
 * How deep a capability body may nest. The deepest real argument is three levels down (a
 * `respond` answer list); the checks after this one (NUL, storable text, zod) recurse, and a
 * body nested thousands deep would exhaust the stack in them instead of being refused.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * The path of the first object or array nested deeper than `maxDepth` in `value` (the body
 * itself is depth 0), or null. Iterative, and it stops at the limit: cheap on any input.
 */
export function pathTooDeep(value: unknown, maxDepth = MAX_BODY_DEPTH): string | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next.value === null || typeof next.value !== "object") continue;
    if (next.depth > maxDepth) return next.path;
    for (const [key, item] of Object.entries(next.value)) {
      if (item !== null && typeof item === "object") stack.push({ value: item, depth: next.depth + 1, path: next.path ? `${next.path}.${key}` : key });
    }
  }
  return null;
}
