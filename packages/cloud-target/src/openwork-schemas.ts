import { z } from "zod";

// openwork-server's own replies (beside the opencode mount it fronts), loose: a newer worker may
// add fields, and only what the target reads is checked.

/** `GET /workspaces`. */
export const WorkspacesSchema = z.looseObject({
  items: z.array(z.looseObject({ id: z.string(), name: z.string().optional() })),
  activeId: z.string().nullish(),
});

/** openwork-server's error body. */
export const OpenworkErrorSchema = z.looseObject({ code: z.string(), message: z.string().optional() });
