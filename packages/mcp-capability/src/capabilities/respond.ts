import { canonicalDigest, RespondAnswerSchema, RespondInputSchema } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import { checkCeiling } from "../budget-rules.js";
import { defineCapability } from "./capability.js";
import { nextRead } from "./next-step.js";

export const respondArgs = z.strictObject({
  sessionId: z.string().min(1).max(160).describe("A sessionId whose read shows state waiting_input."),
  requestId: RespondInputSchema.shape.requestId.describe("The read's pending.id: the request you answer."),
  answer: RespondAnswerSchema.describe(
    'A permission: {"permission": "once" | "always" | "reject"}. A question: {"text": "<your answer>"} (an option\'s label picks it).',
  ),
});

export const respond = defineCapability({
  action: "respond",
  summary: "Answer what a waiting_input remote session asks: a permission (once, always, reject) or a question (text). Then read it to see the turn go on.",
  keywords: ["answer", "approve", "allow", "deny", "reject", "permission", "question", "input", "waiting", "confirm"],
  write: true,
  args: respondArgs,
  run: async (env, { sessionId, requestId, answer }) => {
    const { session, target } = await env.session(sessionId, "respond");
    // A raise stays within the host's ceiling, as a create's budget does.
    if ("budget" in answer) checkCeiling(await env.budgetRules(env.call), answer.budget, "answer.budget");
    // Exactly once per answer: the same answer again replays the first; another answer finds the
    // request gone (the target says so).
    const { result, replayed } = await env.ledger.idempotent(
      env.call,
      { operation: "respond", key: `${sessionId}:${requestId}:${canonicalDigest(answer)}`, args: { sessionId, requestId, answer } },
      () => env.sessions.respond(env.call, target, session, { requestId, answer }),
    );
    return { ...result, alreadyAnswered: result.alreadyAnswered || replayed, next: nextRead(sessionId, { from: "end" }) };
  },
});
