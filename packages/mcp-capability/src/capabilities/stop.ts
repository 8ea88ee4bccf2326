import { z } from "zod";
import { defineCapability } from "./capability.js";

export const stop = defineCapability({
  action: "stop",
  summary: "Stop the running turn of a remote session (or cancel work not yet delivered to a desktop).",
  keywords: ["cancel", "abort", "halt", "interrupt", "kill"],
  write: true,
  args: z.strictObject({ sessionId: z.string().min(1).max(160).describe("A sessionId from remote-session:create or remote-session:list.") }),
  run: async (env, { sessionId }) => {
    const { session, target } = await env.session(sessionId, "stop");
    return { ...(await env.sessions.stop(env.call, target, session)) };
  },
});
