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

/** The answer to `GET work`: the tasks this runner may claim now, oldest first. */
export const WorkResponseSchema = z.looseObject({
  items: z.array(WorkItemSchema).max(LIMITS.workItems),
});
export type WorkResponse = z.infer<typeof WorkResponseSchema>;
