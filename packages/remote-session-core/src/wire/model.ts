import { z } from "zod";
import { SESSION_LIMITS as L } from "../limits.js";

const model = {
  providerId: z.string().min(1).max(L.providerId),
  modelId: z.string().min(1).max(L.modelId),
  variant: z.string().min(1).max(L.modelVariant).optional(),
};

/** The model a session should use, as a caller names it: strict, so a misspelt field is refused. */
export const ModelSchema = z.strictObject(model);
export type Model = z.infer<typeof ModelSchema>;

/** The same shape read from a peer's answer: fields a newer peer adds are ignored. */
export const ModelReplySchema = z.looseObject(model);
