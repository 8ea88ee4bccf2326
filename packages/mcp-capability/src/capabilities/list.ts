import { ListInputSchema } from "@openwork/remote-session-core";
import { defineCapability } from "./capability.js";

export const list = defineCapability({
  action: "list",
  summary: "List your remote sessions, newest first, and which of your desktops are online. Never wakes a worker.",
  keywords: ["sessions", "history", "recent", "desktops", "presence", "machines", "find"],
  write: false,
  args: ListInputSchema,
  run: async (env, args) => {
    const page = await env.ledger.list(env.call, args);
    const desktops = (await Promise.all(env.targets.map(async (t) => (await t.availability(env.call)).machines ?? []))).flat();
    return {
      sessions: page.sessions.map((s) => ({
        sessionId: s.id,
        target: s.target,
        title: s.title,
        state: s.state,
        createdAt: s.createdAt.toISOString(),
        lastActivityAt: s.lastActivityAt.toISOString(),
      })),
      ...(page.nextCursor ? { cursor: page.nextCursor } : {}),
      desktops,
    };
  },
});
