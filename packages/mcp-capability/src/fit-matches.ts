import { RESULT_MAX_BYTES, sizeOf } from "./bound-payload.js";

/** A match as search answers it: whatever a source gave, with its arguments' schema when it has one. */
type Match = { name: string; argumentsSchema?: unknown };

// Room kept for the `compacted` notice beside the matches.
const NOTICE_BYTES = 400;

/** A JSON Schema without its prose: types, required members, enums and bounds stay. */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== "description")
      .map(([key, value]) => [key, withoutDescriptions(value)]),
  );
}

/**
 * Search's answer within one result's size, never by dropping a match (an agent would not learn
 * the capability exists): past the bound, the lowest-ranked matches first lose their arguments'
 * descriptions, then their schemas, each named in `compacted` with how to get it whole.
 */
export function fitMatches<T extends Match>(
  matches: readonly T[],
  max: number = RESULT_MAX_BYTES,
): { matches: T[]; compacted?: { names: string[]; note: string } } {
  const fitted: T[] = matches.map((match) => ({ ...match }));
  const fits = () => sizeOf({ matches: fitted }) <= max - NOTICE_BYTES;
  if (sizeOf({ matches: fitted }) <= max) return { matches: fitted };
  const compacted = new Set<string>();
  // The same match with less of its schema: first its prose, then (`argumentsSchema` gone) all of it.
  const steps = [(m: T) => ({ ...m, argumentsSchema: withoutDescriptions(m.argumentsSchema) }), ({ argumentsSchema: _, ...m }: T) => m as T];
  for (const step of steps) {
    for (let i = fitted.length - 1; i >= 0 && !fits(); i--) {
      const match = fitted[i]!;
      if (match.argumentsSchema === undefined) continue;
      fitted[i] = step(match);
      compacted.add(match.name);
    }
  }
  const note =
    "these matches' arguments are shortened to fit one result: search_capabilities with the capability's name as query and limit 1 gives its whole argumentsSchema";
  return { matches: fitted, compacted: { names: [...compacted], note } };
}
