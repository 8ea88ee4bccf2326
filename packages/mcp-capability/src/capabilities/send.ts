import { SESSION_LIMITS } from "@openwork/remote-session-core";
import { checkFanOut, LIVE_SPAWN_STATES, MessageIdSchema, ModelSchema } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import { declaredFields } from "../target-declarations.js";
import { defineCapability } from "./capability.js";
import { nextRead } from "./next-step.js";

export const sendArgs = z.strictObject({
  sessionId: z.string().min(1).max(160).describe("A sessionId from remote-session:create or remote-session:list."),
  prompt: z.string().min(1).max(SESSION_LIMITS.prompt).describe("The message to send."),
  messageId: MessageIdSchema.optional().describe("A stable id for this prompt (msg_ + letters and digits); a retry with it is never sent twice."),
  model: ModelSchema.optional().describe("The model for this turn, where the session's target can switch models per turn (else named in `ignored`)."),
  idempotencyKey: z.string().min(1).max(SESSION_LIMITS.idempotencyKey).optional(),
});

export const send = defineCapability({
  action: "send",
  summary: "Send a follow-up prompt to a remote session. Then read it to see the reply.",
  keywords: ["message", "prompt", "follow-up", "reply", "continue", "ask", "tell"],
  write: true,
  args: sendArgs,
  run: async (env, { sessionId, idempotencyKey, model, ...prompt }) => {
    const { session, target } = await env.session(sessionId, "send");
    // A prompt revives a spawned session that had ended its work: it takes a live place of its
    // spawner again, so the fan-out limit holds for revivals too.
    if (session.spawnedBy && !LIVE_SPAWN_STATES.includes(session.state)) {
      checkFanOut(await env.ledger.liveSpawned(env.call, session.spawnedBy), session.spawnedBy, env.spawnRules);
    }
    // A follow-up's model only where the target runs a turn with one; else the caller is told.
    if (model && !target.sendTakesModel) env.ignored.push("model");
    const input = model && target.sendTakesModel ? { ...prompt, model } : prompt;
    await env.ledger.takeRateLimit(env.call, env.sendRateLimit);
    // A caller's messageId is an idempotency key too: two concurrent sends of it can never both
    // pass the target's "already there?" check and prompt twice.
    const key = idempotencyKey ?? (input.messageId ? `message:${sessionId}:${input.messageId}` : undefined);
    const sent = async () => {
      if (!key) return env.sessions.send(env.call, target, session, input);
      // The message id is fixed before the first attempt, so a retry after a lost answer is
      // recognised by the target instead of prompting twice.
      const { result, replayed } = await env.ledger.idempotent(
        env.call,
        { operation: "send", key, args: { sessionId, ...input } },
        (reserved) => env.sessions.send(env.call, target, session, { ...input, messageId: input.messageId ?? String(reserved?.messageId) }),
        { reserve: () => ({ messageId: target.newMessageId() }) },
      );
      return { ...result, alreadyPresent: result.alreadyPresent || replayed };
    };
    const { fields, ...result } = await sent();
    // Read on from just before this prompt, so the reply — and no older one — is what comes back.
    const next = nextRead(sessionId, result.cursor ? { cursor: result.cursor } : { from: "end" });
    return { ...result, ...declaredFields(target, "send", fields), next };
  },
});
