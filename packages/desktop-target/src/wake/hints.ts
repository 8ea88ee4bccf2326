import type { WakeNotice } from "./channels.js";
import type { PushHint, RevokeHint, SessionHint, WakeBus } from "./wake-bus.js";

/**
 * What a transaction tells the other gateway processes once it has committed: sessions that
 * changed, tasks to wake runners for. A NOTIFY inside the transaction would take PostgreSQL's
 * server-wide notify lock at commit and hold it through the WAL flush, so notifying commits
 * would run one at a time; hints leave after the commit instead, coalesced, through the bus.
 * `transaction()` hands one to its callback; it takes hints only while the transaction is open.
 */
export interface Hints {
  session(organizationId: string, sessionId: string): void;
  wake(notice: WakeNotice): void;
  /** The runner was revoked: every process forgets its cached registration. */
  revoke(hint: RevokeHint): void;
}

/** What the publisher of a channel has sent (hints, statements) and how many publishes failed. */
export interface PublisherStats {
  published: number;
  statements: number;
  failed: number;
}

/** The hints one transaction gathers: `publish` sends them (after its commit), `discard` drops them (a rollback). */
export interface GatheredHints {
  readonly hints: Hints;
  publish(): void;
  discard(): void;
}

/**
 * Sends committed hints through one bus, coalesced: hints from every transaction that committed
 * meanwhile leave in one publish, at most one in flight, so under load a publish carries many
 * hints and at rest a hint leaves on the next turn of the event loop. A failed publish loses its
 * hints: the runners' backstop poll, `Last-Event-ID` replay and the waiters' timeouts cover it.
 */
export interface HintPublisher {
  /** Starts gathering one transaction's hints. */
  gather(): GatheredHints;
  /** Tells every process's waiters, soon, that a session changed (outside any transaction). */
  session(organizationId: string, sessionId: string): void;
  /** Sends push hints to every process, soon, coalesced with the other hints (after the change committed). */
  push(hints: readonly PushHint[]): void;
  stats(): PublisherStats;
}

interface Gathered {
  sessions: Map<string, SessionHint>;
  wakes: WakeNotice[];
  push: PushHint[];
  revokes: RevokeHint[];
}

const empty = (): Gathered => ({ sessions: new Map(), wakes: [], push: [], revokes: [] });
const isEmpty = (gathered: Gathered) =>
  gathered.sessions.size === 0 && gathered.wakes.length === 0 && gathered.push.length === 0 && gathered.revokes.length === 0;

/** The publisher of one channel: every hint it is given leaves through `bus`, and only through it. */
export function createHintPublisher(bus: WakeBus): HintPublisher {
  let pending = empty();
  let busy = false;
  let stats: PublisherStats = { published: 0, statements: 0, failed: 0 };
  const flush = async () => {
    const batch = pending;
    pending = empty();
    if (isEmpty(batch)) return;
    try {
      await bus.publish({
        sessions: [...batch.sessions.values()],
        wakes: batch.wakes,
        ...(batch.push.length > 0 ? { push: batch.push } : {}),
        ...(batch.revokes.length > 0 ? { revokes: batch.revokes } : {}),
      });
      const published = batch.sessions.size + batch.wakes.length + batch.push.length + batch.revokes.length;
      stats = { ...stats, published: stats.published + published, statements: stats.statements + 1 };
    } catch {
      stats = { ...stats, failed: stats.failed + 1 };
    }
  };
  const drain = async () => {
    busy = true;
    while (!isEmpty(pending)) await flush();
    busy = false;
  };
  const add = (gathered: Gathered) => {
    if (isEmpty(gathered)) return;
    for (const [id, hint] of gathered.sessions) pending.sessions.set(id, hint);
    pending.wakes.push(...gathered.wakes);
    pending.push.push(...gathered.push);
    pending.revokes.push(...gathered.revokes);
    if (!busy) {
      busy = true;
      setImmediate(() => void drain());
    }
  };
  return {
    gather: () => {
      let gathered: Gathered | null = empty();
      // A hint given after the transaction ended would be lost silently (or sent for a rollback): refused.
      const open = () => gathered ?? fail();
      return {
        hints: {
          session: (o, s) => void open().sessions.set(s, { o, s }),
          wake: (notice) => void open().wakes.push(notice),
          revoke: (hint) => void open().revokes.push(hint),
        },
        publish: () => {
          add(open());
          gathered = null;
        },
        discard: () => {
          gathered = null;
        },
      };
    },
    session: (o, s) => add({ ...empty(), sessions: new Map([[s, { o, s }]]) }),
    push: (hints) => add({ ...empty(), push: [...hints] }),
    stats: () => stats,
  };
}

const fail = (): never => {
  throw new Error("hints are gathered inside transaction() only: they are sent once it commits");
};
