import { z } from "zod";
import { GatewayIdSchema, TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";
import { WORK_KINDS } from "./work-kinds.js";

/** One offer of work: the runner claims it by id to learn the rest. */
export const WorkItemSchema = z.looseObject({
  taskId: GatewayIdSchema,
  kind: z.enum(WORK_KINDS),
  /** When the task stops being deliverable, if its creator set a deadline. */
  deliverBy: TimestampSchema.nullable().optional(),
});
export type WorkItem = z.infer<typeof WorkItemSchema>;

const KNOWN_KINDS: ReadonlySet<string> = new Set(WORK_KINDS);

/**
 * An offer of a kind this runner does not know, from a newer gateway (it should not list one the
 * runner has no capability for; if it does, the runner passes it over instead of failing the
 * whole listing). An offer of a known kind is still read in full.
 */
const OfferSchema = z.looseObject({ kind: z.string().max(LIMITS.capability) }).pipe(
  z.union([WorkItemSchema, z.looseObject({ kind: z.string().refine((kind) => !KNOWN_KINDS.has(kind)) }).transform(() => null)]),
);

/** The answer to `GET work`: the tasks this runner may claim now, oldest first. */
export const WorkResponseSchema = z.looseObject({
  items: z
    .array(OfferSchema)
    .max(LIMITS.workItems)
    .transform((items) => items.filter((item): item is WorkItem => item !== null)),
});
export type WorkResponse = z.infer<typeof WorkResponseSchema>;
