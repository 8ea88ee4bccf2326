import type { z } from "zod";
import type { Action } from "../parse-name.js";
import type { RunEnv } from "../run-env.js";

/** One capability: its arguments (zod, from which the JSON Schema is derived), words for search, and what it does. */
export interface Capability<S extends z.ZodType = z.ZodType> {
  action: Action;
  summary: string;
  /** Extra words search matches on. */
  keywords: readonly string[];
  /** Mutations need the write scope. */
  write: boolean;
  args: S;
  /** The result payload: what the model reads (as JSON) and the card renders. */
  run(env: RunEnv, args: z.output<S>): Promise<Record<string, unknown>>;
}

export const defineCapability = <S extends z.ZodType>(capability: Capability<S>): Capability<S> => capability;
