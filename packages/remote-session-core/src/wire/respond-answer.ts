import { z } from "zod";
import { BudgetSchema } from "../ledger/session-budget.js";
import { SESSION_LIMITS as L } from "../limits.js";

const permission = { permission: z.enum(["once", "always", "reject"]) };
const text = { text: z.string().min(1).max(L.answerText) };

/** An answer an engine takes: a permission decision, or the text that answers a question. Strict, as callers send it. */
export const EngineAnswerSchema = z.union([z.strictObject(permission), z.strictObject(text)]);
export type EngineAnswer = z.infer<typeof EngineAnswerSchema>;

/** An answer `respond` takes: an engine's, or a budget raised (the gateway's own request, never passed to an engine). */
export const RespondAnswerSchema = z.union([EngineAnswerSchema, z.strictObject({ budget: BudgetSchema })]);
export type RespondAnswer = z.infer<typeof RespondAnswerSchema>;

/** The same shape read from a peer's answer (a runner's assignment): fields a newer peer adds are ignored. */
export const RespondAnswerReplySchema = z.union([z.looseObject(permission), z.looseObject(text)]);
