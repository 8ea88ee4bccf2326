import { ReadInputSchema, type TranscriptMessage } from "@openwork/remote-session-core";
import { cardText } from "@openwork/mcp-app-card";
import { z } from "zod";
import { defineCapability } from "./capability.js";

export const readArgs = ReadInputSchema.extend({
  sessionId: z.string().min(1).max(160).describe("A sessionId from remoteSession.create or remoteSession.list."),
  cursor: ReadInputSchema.shape.cursor.describe("The cursor the previous read returned: only newer messages come back."),
  limit: ReadInputSchema.shape.limit.describe("At most this many messages (1–100)."),
  waitMs: ReadInputSchema.shape.waitMs.describe("Wait up to this long (≤ 25 000 ms) for something newer than the cursor."),
});

export const read = defineCapability({
  action: "read",
  summary: "Read a remote session: its state and the messages after a cursor. With waitMs it waits for the reply.",
  keywords: ["transcript", "messages", "status", "result", "reply", "poll", "wait", "progress", "output"],
  write: false,
  args: readArgs,
  run: async (env, { sessionId, ...input }) => {
    const { session, target } = await env.session(sessionId);
    const result = await target.read(env.call, session, input);
    return { ...result, lastActivityAt: session.lastActivityAt.toISOString() };
  },
  describe: (r) => {
    const lines = [cardText(r as never)];
    for (const m of r.messages as TranscriptMessage[]) {
      lines.push(`[${m.role}] ${m.text ?? "(prompt sent)"}${m.truncated ? " …(truncated)" : ""}`);
    }
    if (r.partialText) lines.push(`[assistant, still writing] ${r.partialText}`);
    if (r.lastError) lines.push(`Last error: ${JSON.stringify(r.lastError)}`);
    lines.push(`cursor: ${r.cursor}${r.hasMore ? " (more messages waiting: read again)" : ""}`);
    return lines.join("\n");
  },
});
