import type { RegisteredRunner, TokenHolder } from "../store/touch-runner.js";

/** A runner as a revocation names it. */
export type RunnerRef = Pick<TokenHolder, "organizationId" | "memberId" | "runnerId">;

/**
 * The registrations one channel's runner routes read lately (one cache per `createRunnerRoutes`,
 * never per module), so a runner's requests in between skip the registration's round trip.
 *
 * Staleness bound: a registration read at time t (taken before its statement leaves) is served
 * until t + `ttlMs` (≤ 1 s). A revocation committed after t is therefore refused by every process
 * at most `ttlMs` after its commit, even if its hint is lost; the revoking process forgets the
 * runner at once after the commit, the others when the revoke hint arrives on the wake bus, and
 * every process forgets everything when its bus resyncs (hints may have been lost). A read that
 * was under way when the runner was forgotten is not stored. Only accepted registrations are
 * kept: a refusal is read again on the next request.
 */
export interface RegistrationCache {
  /** The registration of this token's runner, from memory when read within `ttlMs`, else from `read` (then kept). */
  registration(holder: TokenHolder, read: () => Promise<RegisteredRunner>, options?: { fresh?: boolean }): Promise<RegisteredRunner>;
  /** Forgets a runner's registrations (every token of it): it was revoked. */
  forget(runner: RunnerRef): void;
  /** Forgets every registration: revoke hints may have been lost. */
  clear(): void;
}

interface Entry {
  registered: RegisteredRunner;
  readAt: number;
}

const runnerKey = (runner: RunnerRef) => `${runner.organizationId}\u0000${runner.memberId}\u0000${runner.runnerId}`;

/** A cache whose entries live `ttlMs` (0: none is kept, every request reads). `now` is a monotonic clock in ms. */
export function createRegistrationCache(options: { ttlMs: number; now?: () => number }): RegistrationCache {
  const { ttlMs } = options;
  const now = options.now ?? (() => performance.now());
  // Per runner, per token mint: a token minted before a revocation stays refused when a newer one is not.
  const runners = new Map<string, Map<number, Entry>>();
  // Bumped by every forget: a read under way across one is not kept (it may predate the revocation).
  let generation = 0;
  let prunedAt = now();
  const prune = (at: number) => {
    if (at - prunedAt < ttlMs) return;
    prunedAt = at;
    for (const [key, mints] of runners) {
      for (const [mintedAt, entry] of mints) if (at - entry.readAt >= ttlMs) mints.delete(mintedAt);
      if (mints.size === 0) runners.delete(key);
    }
  };
  const keep = (holder: TokenHolder, entry: Entry) => {
    prune(entry.readAt);
    const key = runnerKey(holder);
    const mints = runners.get(key) ?? new Map<number, Entry>();
    mints.set(holder.mintedAt, entry);
    runners.set(key, mints);
  };
  return {
    registration: async (holder, read, { fresh = false } = {}) => {
      if (ttlMs === 0) return read();
      const cached = fresh ? undefined : runners.get(runnerKey(holder))?.get(holder.mintedAt);
      if (cached && now() - cached.readAt < ttlMs) return cached.registered;
      const readAt = now();
      const seen = generation;
      const registered = await read();
      if (generation === seen) keep(holder, { registered, readAt });
      return registered;
    },
    forget: (runner) => {
      generation++;
      runners.delete(runnerKey(runner));
    },
    clear: () => {
      generation++;
      runners.clear();
    },
  };
}
