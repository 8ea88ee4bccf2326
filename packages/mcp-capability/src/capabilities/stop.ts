import { z } from "zod";
import { defineCapability } from "./capability.js";
import { nextAfter } from "./next-step.js";

export const stop = defineCapability({
  action: "stop",
  summary: "Stop the running turn of a remote session (or cancel work not yet delivered to a desktop).",
  keywords: ["cancel", "abort", "halt", "interrupt", "kill"],
  write: true,
  args: z.strictObject({ sessionId: z.string().min(1).max(160).describe("A sessionId from remote-session:create or remote-session:list.") }),
  run: async (env, { sessionId }) => {
    const { session, target } = await env.session(sessionId, "stop");
    const { stopped } = await env.sessions.stop(env.call, target, session);
    // One shape whatever the target: did it stop something, and where the session stands now.
    const { state } = (await env.ledger.find(env.call, sessionId)) ?? session;
    const next = nextAfter(sessionId, state);
    return { sessionId, target: target.name, stopped, state, ...(next ? { next } : {}) };
  },
});
