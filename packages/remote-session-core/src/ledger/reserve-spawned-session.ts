import { fail } from "../errors/session-error.js";
import { inTransaction, type Queryable } from "../queryable.js";
import type { SessionState } from "../session-state.js";
import type { OwnerScope } from "../target.js";
import { findSession } from "./find-session.js";
import { type ReservedRow, reserveSession } from "./insert-session.js";
import { type LedgerSession, type SessionRow, toLedgerSession } from "./ledger-session.js";
import { carveBudget, refuseWhilePaused } from "./tree-budget.js";

/** How far sessions may start sessions: a chain's depth, and what one spawner may keep live. */
export interface SpawnRules {
  /** The deepest a spawned session may sit (a session a person started is depth 0). */
  maxDepth: number;
  /** Live (queued, waking, running or waiting) sessions one session may have spawned at once. */
  maxLivePerSpawner: number;
}

/** Zeron's numbers: chains to depth 3, 32 live children per spawner. */
export const DEFAULT_SPAWN_RULES: Readonly<SpawnRules> = Object.freeze({ maxDepth: 3, maxLivePerSpawner: 32 });

/** `DEFAULT_SPAWN_RULES` with `overrides`; a host's bad value is refused at start, not met on the first spawn. */
export function resolveSpawnRules(overrides: Partial<SpawnRules> = {}): SpawnRules {
  const rules = { ...DEFAULT_SPAWN_RULES, ...overrides };
  if (!Number.isInteger(rules.maxDepth) || rules.maxDepth < 0 || rules.maxDepth > 64)
    throw new RangeError("spawnRules.maxDepth must be a whole number in [0, 64]");
  if (!Number.isInteger(rules.maxLivePerSpawner) || rules.maxLivePerSpawner < 1)
    throw new RangeError("spawnRules.maxLivePerSpawner must be a whole number ≥ 1");
  return rules;
}

/** States in which a spawned session still holds its spawner's fan-out: it has work queued or running. */
export const LIVE_SPAWN_STATES: readonly SessionState[] = ["queued", "waking", "running", "waiting_input"];

/** States after which a session's engine runs no more turns, so its credential may spawn nothing. */
const ENDED_STATES: readonly SessionState[] = ["stopped", "failed", "expired"];

/** Where a new session would sit under `spawner`: refused (typed, nothing written) past the rules or when the spawner has ended. */
export function checkSpawn(spawner: LedgerSession | null, rules: SpawnRules): { rootId: string; depth: number } {
  if (!spawner) return fail("unknown_session", "the session this credential was issued for no longer exists: nothing was created");
  if (ENDED_STATES.includes(spawner.state)) {
    return fail("session_not_active", `the spawning session ${spawner.id} has ended (${spawner.state}): it can start no more sessions`);
  }
  if (spawner.stopRequestedAt) {
    return fail("session_not_active", `the spawning session ${spawner.id} was stopped: it can start no more sessions until it is prompted again`);
  }
  const depth = spawner.depth + 1;
  if (depth > rules.maxDepth) {
    return fail(
      "spawn_depth_exceeded",
      `session ${spawner.id} sits at depth ${spawner.depth}; sessions it starts would sit at depth ${depth}, past the limit of ${rules.maxDepth}: nothing was created`,
      { context: { depth, maxDepth: rules.maxDepth } },
    );
  }
  return { rootId: spawner.rootId ?? spawner.id, depth };
}

/** Live sessions `spawnerId` has spawned. */
export async function countLiveSpawned(sql: Queryable, scope: OwnerScope, spawnerId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from remote_session
    where organization_id = ${scope.organizationId} and spawned_by = ${spawnerId} and state = any(${LIVE_SPAWN_STATES as SessionState[]}::text[])`;
  return row?.n ?? 0;
}

/** Refuses a spawn when `spawnerId` already keeps `rules.maxLivePerSpawner` live sessions. */
export function checkFanOut(live: number, spawnerId: string, rules: SpawnRules): void {
  if (live < rules.maxLivePerSpawner) return;
  fail(
    "spawn_limit_reached",
    `session ${spawnerId} already has ${live} live sessions it started (the limit is ${rules.maxLivePerSpawner}): stop or wait for one, then retry`,
    { context: { live, maxLive: rules.maxLivePerSpawner } },
  );
}

/**
 * `reserveSession` for a session spawned by `spawnerId`, with the guards checked under the
 * spawner's row lock: concurrent spawns of one spawner serialize on it, so a batch never passes
 * the fan-out limit, and a stop that marked the spawner ended first (a cascade) refuses the rest.
 * The count is a statement of its own, after the lock: its snapshot then sees what the spawns
 * that held the lock before committed. A retry of a create that already reserved its row gets
 * that row back, whatever the counts are now.
 */
export async function reserveSpawnedSession(
  sql: Queryable,
  scope: OwnerScope,
  session: ReservedRow,
  spawn: { spawnerId: string; rules: SpawnRules },
): Promise<{ session: LedgerSession; fresh: boolean } | null> {
  const run = async (tx: Queryable) => {
    const [locked] = await tx<SessionRow[]>`
      select * from remote_session
      where organization_id = ${scope.organizationId} and user_id = ${scope.userId} and id = ${spawn.spawnerId}
      for update`;
    const placed = checkSpawn(locked ? toLedgerSession(locked) : null, spawn.rules);
    const earlier = await findSession(tx, scope, session.id);
    if (earlier) return { session: earlier, fresh: false };
    checkFanOut(await countLiveSpawned(tx, scope, spawn.spawnerId), spawn.spawnerId, spawn.rules);
    await refuseWhilePaused(tx, scope, toLedgerSession(locked!), "this create");
    const { budget, budgeted } = await carveBudget(tx, { organizationId: scope.organizationId, id: spawn.spawnerId }, session.budget);
    return reserveSession(tx, scope, { ...session, budget }, { spawnedBy: spawn.spawnerId, ...placed, underBudget: budgeted });
  };
  return inTransaction(sql, run);
}
