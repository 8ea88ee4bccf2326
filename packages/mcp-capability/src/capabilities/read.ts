import { ReadInputSchema } from "@openwork/remote-session-core";
import { z } from "zod";
import { defineCapability } from "./capability.js";
import { inProgress, nextRead, nextRespond, nextSend } from "./next-step.js";

export const readArgs = ReadInputSchema.extend({
  sessionId: z.string().min(1).max(160).describe("A sessionId from remote-session:create or remote-session:list."),
  cursor: ReadInputSchema.shape.cursor.describe("The cursor the previous read returned: only newer messages come back."),
  from: ReadInputSchema.shape.from.describe('Without a cursor: "start" (default) reads from the first message, "end" the last `limit`.'),
  limit: ReadInputSchema.shape.limit.describe("At most this many messages (1–100)."),
  waitMs: ReadInputSchema.shape.waitMs.describe("Wait up to this long (≤ 25 000 ms) for something newer than the cursor."),
}).refine((a) => a.cursor === undefined || a.from === undefined, { message: "give cursor or from, not both", path: ["from"] });

export const read = defineCapability({
  action: "read",
  summary: "Read a remote session: its state and the messages after a cursor. With waitMs it waits for the reply.",
  keywords: ["transcript", "messages", "status", "result", "reply", "poll", "wait", "progress", "output"],
  write: false,
  args: readArgs,
  run: async (env, { sessionId, ...input }) => {
    const { session, target } = await env.session(sessionId, "read");
    const result = await env.sessions.read(env.call, target, session, input);
    const next = result.pending && !result.pending.inAppOnly
      ? nextRespond(sessionId, result.pending)
      : result.hasMore || inProgress(result.state) || result.pending?.inAppOnly
        ? nextRead(sessionId, { cursor: result.cursor })
        : result.state === "idle"
          ? nextSend(sessionId)
          : undefined;
    // Nobody answered for too long: say so, rather than let it read as an ordinary wait.
    const waited = result.pending?.askedAt ? Date.now() - Date.parse(result.pending.askedAt) : 0;
    if (result.pending && waited > env.inputTimeoutMs) result.pending = { ...result.pending, overdue: true };
    return { ...result, targetLabel: target.label, lastActivityAt: session.lastActivityAt.toISOString(), ...(next ? { next } : {}) };
  },
});
