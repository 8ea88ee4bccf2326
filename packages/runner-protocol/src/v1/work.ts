import { z } from "zod";
import { GatewayIdSchema, TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";
import { isBuiltInKind, WORK_KINDS } from "./work-kinds.js";

/** One offer of work: the runner claims it by id to learn the rest. */
export const WorkItemSchema = z.looseObject({
  taskId: GatewayIdSchema,
  kind: z.enum(WORK_KINDS),
  /** When the task stops being deliverable, if its creator set a deadline. */
  deliverBy: TimestampSchema.nullable().optional(),
});
export type WorkItem = z.infer<typeof WorkItemSchema>;

/**
 * An offer of a kind this runner does not know, from a newer gateway. It should not list one the
 * runner has no capability for (the host's own kinds are claimed through `claim-next` only); if
 * it does, the runner passes it over instead of failing the whole listing. Offers of known kinds
 * are read in full.
 */
const isUnknownKindOffer = (item: unknown): boolean =>
  typeof item === "object" && item !== null && typeof (item as { kind?: unknown }).kind === "string" && !isBuiltInKind((item as { kind: string }).kind);

/** The answer to `GET work`: the tasks this runner may claim now, oldest first. */
export const WorkResponseSchema = z.looseObject({
  // A pipe, not `z.preprocess`: its declared type (`ZodPipe`) exists in every zod 4, so the
  // published declarations type-check against the oldest zod the peer range admits (4.3.6).
  items: z.pipe(
    z.transform((items: unknown) => (Array.isArray(items) ? items.filter((item) => !isUnknownKindOffer(item)) : items)),
    z.array(WorkItemSchema).max(LIMITS.workItems),
  ),
});
export type WorkResponse = z.infer<typeof WorkResponseSchema>;
