/** A burst, then a steady rate: a token bucket. */
export interface Rate {
  burst: number;
  perSecond: number;
}

/**
 * What one member (or one of its credentials) may hold or start on one gateway process, so that
 * a member's flood is refused at once, before any database work, and costs that member only.
 * Each refusal is a typed `rate_limited` with `retryAfterMs`.
 */
export interface MemberLimits {
  /**
   * MCP requests of one member answered at once (waiting reads and push streams included),
   * checked before any MCP server is built for them. Default 64.
   */
  mcpRequestsInFlight: number;
  /** Reads with `waitMs` one member may have waiting at once. Default 16. */
  waitingReads: number;
  /** Push streams one member may hold open: 2025-era GET streams and 2026-era listens together. Default 16; past it a new one is refused. */
  pushStreams: number;
  /**
   * Stateful MCP sessions one member keeps (across replicas, in PostgreSQL). Default 64; an
   * `initialize` past it ends the member's oldest session (its client initializes again on its 404).
   */
  mcpSessions: number;
  /** `initialize`s (new MCP sessions) per member. Default a burst of 32, then 2 a second. */
  mcpSessionOpens: Rate;
  /** Runner wake-stream opens per runner token. Default a burst of 8, then 1 a second. */
  runnerStreamOpensPerToken: Rate;
  /** Runner wake-stream opens per member, all its runners together. Default a burst of 64, then 8 a second. */
  runnerStreamOpensPerMember: Rate;
}

export const DEFAULT_MEMBER_LIMITS: MemberLimits = {
  mcpRequestsInFlight: 64,
  waitingReads: 16,
  pushStreams: 16,
  mcpSessions: 64,
  mcpSessionOpens: { burst: 32, perSecond: 2 },
  runnerStreamOpensPerToken: { burst: 8, perSecond: 1 },
  runnerStreamOpensPerMember: { burst: 64, perSecond: 8 },
};
