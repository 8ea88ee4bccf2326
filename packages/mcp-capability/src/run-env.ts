import { fail, type LedgerSession, type RateLimit, type SessionLedger, type Target, type TargetCall } from "@openwork/remote-session-core";

/** What a capability runs with: the call, the ledger, and the targets behind live checks. */
export interface RunEnv {
  call: TargetCall;
  ledger: SessionLedger;
  targets: readonly Target[];
  /** The per-member create limit. */
  createRateLimit: RateLimit;
  /** A target that is available to this member now (a flag can flip mid-session). */
  target(name: string): Promise<Target>;
  /** The member's session and the target serving it; unknown and foreign ids alike are `unknown_session`. */
  session(sessionId: string): Promise<{ session: LedgerSession; target: Target }>;
}

export function createRunEnv(call: TargetCall, ledger: SessionLedger, targets: readonly Target[], createRateLimit: RateLimit): RunEnv {
  const target = async (name: string) => {
    const found = targets.find((t) => t.name === name);
    if (!found) {
      return name === "cloud"
        ? fail("cloud_not_available", "cloud sessions are not offered by this gateway")
        : fail("invalid_capability_arguments", `no target named ${name}`);
    }
    // Cloud availability is the organization's flag, read live on every call.
    if (name === "cloud" && !(await found.availability(call)).available) {
      fail("cloud_not_available", "cloud sessions are turned off for this organization");
    }
    return found;
  };
  return {
    call,
    ledger,
    targets,
    createRateLimit,
    target,
    session: async (sessionId) => {
      const session = await ledger.find(call, sessionId);
      if (!session) return fail("unknown_session", "no such session; call remote-session:list to see yours");
      return { session, target: await target(session.target) };
    },
  };
}
