import fc from "fast-check";

/** A JSON value's path to each of its objects (the root is `[]`), arrays walked into. */
export function objectPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => objectPaths(item, [...path, i]));
  if (typeof value !== "object" || value === null) return [];
  return [path, ...Object.entries(value).flatMap(([key, child]) => objectPaths(child, [...path, key]))];
}

/**
 * A copy of `value` with `key: extra` added to the objects `where` picks (default: every
 * object, at every depth), as a newer peer adds a field. An object that already has the key keeps
 * its own value.
 */
export function withUnknownKey(
  value: unknown,
  key: string,
  extra: unknown,
  where: (path: (string | number)[]) => boolean = () => true,
  path: (string | number)[] = [],
): unknown {
  if (Array.isArray(value)) return value.map((item, i) => withUnknownKey(item, key, extra, where, [...path, i]));
  if (typeof value !== "object" || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(value)) copy[name] = withUnknownKey(child, key, extra, where, [...path, name]);
  if (where(path) && !Object.hasOwn(copy, key)) copy[key] = extra;
  return copy;
}

/** Names a newer protocol might add: lower camel case, as every field of the protocol is. */
export const unknownKey = fc.stringMatching(/^[a-z][A-Za-z0-9]{0,11}$/);

/** What such a field might hold: any JSON, objects and arrays included. */
export const unknownValue = fc.jsonValue({ maxDepth: 2 });
