import {
  fail,
  type LedgerSession,
  type RateLimit,
  type RemoteSessions,
  type SessionLedger,
  type SpawnRules,
  type Target,
  type TargetCall,
} from "@openwork/remote-session-core";
import type { NotifiedLookup } from "./notification-log.js";
import type { TargetCatalog } from "./target-catalog.js";

/** What a capability runs with: the call, the ledger, the session model and the targets. */
export interface RunEnv {
  call: TargetCall;
  ledger: SessionLedger;
  /** Every session-row write goes through it: targets report, the core records. */
  sessions: RemoteSessions;
  catalog: TargetCatalog;
  /** The per-owner create limit. */
  createRateLimit: RateLimit;
  /** The per-owner send limit. */
  sendRateLimit: RateLimit;
  /** A request waiting on the human longer than this reads as `overdue`. */
  inputTimeoutMs: number;
  /** What the member was told of a session's pending request (the host's notification log); never throws. */
  notified: NotifiedLookup;
  /** The session whose engine makes this call (its verified session credential), or null for a person's own client. */
  spawner: string | null;
  /** How deep and how wide sessions may start sessions. */
  spawnRules: SpawnRules;
  /** Arguments the call set aside (named in the result); a capability adds those it could not honour. */
  ignored: string[];
  /** The caller's session and the target serving it, checked live per the target's rules; unknown and foreign ids alike are `unknown_session`. */
  session(sessionId: string, use: "read" | "send" | "stop" | "respond"): Promise<{ session: LedgerSession; target: Target }>;
}

export function createRunEnv(call: TargetCall, ignored: string[], parts: Omit<RunEnv, "call" | "ignored" | "session">): RunEnv {
  return {
    call,
    ignored,
    ...parts,
    session: async (sessionId, use) => {
      const session = await parts.ledger.find(call, sessionId);
      if (!session) return fail("unknown_session", "no such session; call remote-session:list to see yours");
      return { session, target: await parts.catalog.resolve(call, session.target, use) };
    },
  };
}
