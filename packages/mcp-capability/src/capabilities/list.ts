import { ListInputSchema } from "@openwork/remote-session-core";
import { defineCapability } from "./capability.js";

export const list = defineCapability({
  action: "list",
  summary: "List your remote sessions, newest first, and which of your machines (desktops) are online. Never wakes a worker: each state is as of `stateAsOf`; read a session for its live state.",
  keywords: ["sessions", "history", "recent", "desktops", "presence", "machines", "find"],
  write: false,
  args: ListInputSchema,
  run: async (env, args) => {
    const page = await env.ledger.list(env.call, args);
    const offered = await env.catalog.offered(env.call);
    return {
      sessions: page.sessions.map((s) => ({
        sessionId: s.id,
        target: s.target,
        title: s.title,
        state: s.state,
        // List wakes nothing: the state is the ledger's, as of its last record (a read refreshes it).
        stateAsOf: s.updatedAt.toISOString(),
        createdAt: s.createdAt.toISOString(),
        lastActivityAt: s.lastActivityAt.toISOString(),
      })),
      ...(page.nextCursor ? { cursor: page.nextCursor } : {}),
      machines: offered.flatMap(({ target, availability }) => (availability.machines ?? []).map((m) => ({ target: target.name, ...m }))),
    };
  },
});
