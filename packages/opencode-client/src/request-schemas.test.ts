import { describe, expect, it } from "vitest";
import { PermissionReplyRequestSchema, PromptAsyncRequestSchema, promptAsyncBody, QuestionReplyRequestSchema } from "./request-schemas.js";

describe("request schemas", () => {
  it("builds a prompt with its message id and the turn's model as opencode names them", () => {
    expect(promptAsyncBody({ text: "hi", messageId: "msg_1", model: { providerId: "p", modelId: "m", variant: "high" } })).toEqual({
      parts: [{ type: "text", text: "hi" }],
      messageID: "msg_1",
      model: { providerID: "p", modelID: "m" },
      variant: "high",
    });
    expect(promptAsyncBody({ text: "hi" })).toEqual({ parts: [{ type: "text", text: "hi" }] });
  });

  it("refuses a member opencode would drop without a word", () => {
    expect(PromptAsyncRequestSchema.safeParse({ parts: [{ type: "text", text: "hi" }], messageId: "msg_1" }).success).toBe(false);
    expect(PromptAsyncRequestSchema.safeParse({ parts: [{ type: "text", text: "hi", extra: 1 }] }).success).toBe(false);
    expect(PermissionReplyRequestSchema.safeParse({ reply: "maybe" }).success).toBe(false);
    expect(QuestionReplyRequestSchema.safeParse({ answers: [["Blue"]], answer: "Blue" }).success).toBe(false);
  });
});
