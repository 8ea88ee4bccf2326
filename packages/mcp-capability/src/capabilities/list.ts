import { type LedgerSession, shownState } from "@openwork/remote-session-core";
import { ListInputSchema } from "@openwork/remote-session-core/internal";
import { itemsWithin } from "../bound-payload.js";
import { checkCallerActive, isWithinTree, type RunEnv } from "../run-env.js";
import { defineCapability } from "./capability.js";

// List wakes nothing: each state is the ledger's, as of its last record (a read refreshes it).
const listed = (s: LedgerSession) => ({
  sessionId: s.id,
  target: s.target,
  title: s.title,
  state: shownState(s),
  stateAsOf: s.updatedAt.toISOString(),
  createdAt: s.createdAt.toISOString(),
  lastActivityAt: s.lastActivityAt.toISOString(),
  spend: s.spend,
  ...(s.budget ? { budget: s.budget } : {}),
  ...(s.budgetPause ? { pausedAtBudget: { requestId: s.budgetPause.id, scope: s.budgetPause.scope } } : {}),
  ...(s.spawnedBy ? { spawnedBy: s.spawnedBy, depth: s.depth } : {}),
});

/** The spawner a session's engine may list under: its own session by default, one below it when named; null for any other. */
async function engineListScope(env: RunEnv, spawnedBy: string | undefined): Promise<{ spawnedBy: string } | null> {
  const caller = env.spawner!;
  await checkCallerActive(env.ledger, env.call, caller);
  if (spawnedBy === undefined || spawnedBy === caller) return { spawnedBy: caller };
  const named = await env.ledger.find(env.call, spawnedBy);
  return named && (await isWithinTree(env.ledger, env.call, named, caller)) ? { spawnedBy } : null;
}

export const list = defineCapability({
  action: "list",
  summary:
    "List your remote sessions, newest first, and which of your machines (desktops) are online. With spawnedBy, only the sessions that session started. Never wakes a worker: each state is as of `stateAsOf`; read a session for its live state.",
  keywords: ["sessions", "history", "recent", "desktops", "presence", "machines", "find"],
  write: false,
  args: ListInputSchema,
  run: async (env, args) => {
    const offered = await env.catalog.offered(env.call);
    const machines = offered.flatMap(({ target, availability }) => (availability.machines ?? []).map((m) => ({ target: target.name, ...m })));
    // A session's engine lists what it started (or what they started), never the member's other sessions.
    const scope = env.spawner ? await engineListScope(env, args.spawnedBy) : { spawnedBy: args.spawnedBy };
    if (scope === null) return { sessions: [], machines };
    const pageOf = async (limit: number) => {
      const page = await env.ledger.list(env.call, { ...args, ...scope, limit });
      return { sessions: page.sessions.map(listed), ...(page.nextCursor ? { cursor: page.nextCursor } : {}), machines };
    };
    const payload = await pageOf(args.limit);
    // A page that would not fit one result is asked again, shorter: its cursor goes on from there.
    const fit = itemsWithin(payload, "sessions");
    return fit < payload.sessions.length ? pageOf(Math.max(1, fit)) : payload;
  },
});
