import { fail, type LedgerSession, type RateLimit, type SpawnRules, type Target, type TargetCall } from "@openwork/remote-session-core";
import type { RemoteSessions, SessionLedger } from "@openwork/remote-session-core/internal";
import type { NotifiedLookup } from "./notification-log.js";
import type { BudgetRules, BudgetScope } from "./budget-rules.js";
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
  /** The host's budgets for sessions a person starts. */
  budgetRules: (scope: BudgetScope) => BudgetRules | Promise<BudgetRules>;
  /** Arguments the call set aside (named in the result); a capability adds those it could not honour. */
  ignored: string[];
  /** The caller's session and the target serving it, checked live per the target's rules; unknown and foreign ids alike are `unknown_session`. */
  session(sessionId: string, use: "read" | "send" | "stop" | "respond"): Promise<{ session: LedgerSession; target: Target }>;
}

// A chain is at most this deep (SpawnRules cap it at 64): the walk up from a session ends there.
const MAX_CHAIN = 64;

/**
 * Whether `sessionId` is `ancestorId` or below it in its spawn tree (the member's own sessions
 * only): walks up `spawnedBy`, one indexed read per level.
 */
export async function isWithinTree(ledger: SessionLedger, call: TargetCall, session: LedgerSession, ancestorId: string): Promise<boolean> {
  let current: LedgerSession | null = session;
  for (let level = 0; current && level <= MAX_CHAIN; level++) {
    if (current.id === ancestorId) return true;
    current = current.spawnedBy ? await ledger.find(call, current.spawnedBy) : null;
  }
  return false;
}

const ENDED: readonly string[] = ["stopped", "failed", "expired"];

/** Refuses a session credential whose session is gone or has ended: every call of its engine, a list included, checks it first. */
export async function checkCallerActive(ledger: SessionLedger, call: TargetCall, callerSessionId: string): Promise<void> {
  const caller = await ledger.find(call, callerSessionId);
  if (!caller) fail("unknown_session", "the session this credential was issued for no longer exists");
  if (ENDED.includes(caller.state)) fail("session_not_active", `the session this credential was issued for has ended (${caller.state})`);
}

/**
 * What a session's engine (a call with its session credential) may do: act on its own session
 * and what it started, never on the member's other sessions (they look like no session at all),
 * and never answer what a session asks (the member does). Its session must still be there and
 * not ended: a credential outlives neither.
 */
async function engineMay(parts: Pick<RunEnv, "ledger">, call: TargetCall, spawner: string, session: LedgerSession, use: string): Promise<void> {
  await checkCallerActive(parts.ledger, call, spawner);
  if (use === "respond") {
    fail("insufficient_mcp_scope", "a session's engine cannot answer what a session asks: the member answers it (from a read or the notification's link)");
  }
  if (!(await isWithinTree(parts.ledger, call, session, spawner))) fail("unknown_session", "no such session; call remote-session:list to see yours");
}

export function createRunEnv(call: TargetCall, ignored: string[], parts: Omit<RunEnv, "call" | "ignored" | "session">): RunEnv {
  return {
    call,
    ignored,
    ...parts,
    session: async (sessionId, use) => {
      const session = await parts.ledger.find(call, sessionId);
      if (!session) return fail("unknown_session", "no such session; call remote-session:list to see yours");
      if (parts.spawner) await engineMay(parts, call, parts.spawner, session, use);
      return { session, target: await parts.catalog.resolve(call, session.target, use) };
    },
  };
}
