import type { LedgerSession } from "@openwork/remote-session-core";
import type { RunEnv } from "../run-env.js";

/** What a result says of the session that started this one: its id and title, the depth, and the same in words. */
export interface Provenance {
  spawnedBy: { sessionId: string; title?: string };
  depth: number;
  provenance: string;
}

/**
 * The spawner of `session` as results name it, or nothing for a session a person started. The
 * spawner's title comes from the ledger (the caller's own sessions only); one since removed is
 * named by its id.
 */
export async function provenanceOf(env: RunEnv, session: Pick<LedgerSession, "spawnedBy" | "depth">): Promise<Provenance | undefined> {
  if (!session.spawnedBy) return undefined;
  const spawner = await env.ledger.find(env.call, session.spawnedBy);
  const named = spawner ? `session “${spawner.title}” (${spawner.id})` : `session ${session.spawnedBy}, since removed`;
  return {
    spawnedBy: { sessionId: session.spawnedBy, ...(spawner ? { title: spawner.title } : {}) },
    depth: session.depth,
    provenance: `started by ${named}, at depth ${session.depth} of at most ${env.spawnRules.maxDepth}`,
  };
}
