import { z } from "zod";

// What is sent to opencode, strict: a member misspelled here would be dropped by the engine
// without a word, so it fails here instead.

/** `POST session`. */
export const CreateSessionRequestSchema = z.strictObject({ title: z.string().optional() });
export type CreateSessionRequest = z.infer<typeof CreateSessionRequestSchema>;

/** `POST session/:id/prompt_async`: a text prompt, with the message id it is stored under and the model of this turn. */
export const PromptAsyncRequestSchema = z.strictObject({
  parts: z.array(z.strictObject({ type: z.literal("text"), text: z.string() })).min(1),
  /** opencode orders messages by id and takes only ids that start with `msg`. */
  messageID: z.string().optional(),
  model: z.strictObject({ providerID: z.string(), modelID: z.string() }).optional(),
  variant: z.string().optional(),
});
export type PromptAsyncRequest = z.infer<typeof PromptAsyncRequestSchema>;

/** `POST permission/:id/reply`. */
export const PermissionReplyRequestSchema = z.strictObject({ reply: z.enum(["once", "always", "reject"]) });
export type PermissionReplyRequest = z.infer<typeof PermissionReplyRequestSchema>;

/** `POST question/:id/reply`: one list of chosen labels (or free text) per question. */
export const QuestionReplyRequestSchema = z.strictObject({ answers: z.array(z.array(z.string())) });
export type QuestionReplyRequest = z.infer<typeof QuestionReplyRequestSchema>;

/** The body of a text prompt; `model` as the gateway names it (`providerId`, `modelId`, `variant`). */
export function promptAsyncBody(prompt: {
  text: string;
  messageId?: string | undefined;
  model?: { providerId: string; modelId: string; variant?: string | undefined } | undefined;
}): PromptAsyncRequest {
  return PromptAsyncRequestSchema.parse({
    parts: [{ type: "text", text: prompt.text }],
    ...(prompt.messageId === undefined ? {} : { messageID: prompt.messageId }),
    ...(prompt.model ? { model: { providerID: prompt.model.providerId, modelID: prompt.model.modelId } } : {}),
    ...(prompt.model?.variant ? { variant: prompt.model.variant } : {}),
  });
}
