import type { Queryable } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import type { WakeNotice } from "./channels.js";
import { postgresWakeBus, type PushHint, type SessionHint, type WakeBus } from "./wake-bus.js";

/**
 * What a transaction tells the other gateway processes once it has committed: sessions that
 * changed, tasks to wake runners for. A NOTIFY inside the transaction would take PostgreSQL's
 * server-wide notify lock at commit and hold it through the WAL flush, so notifying commits
 * would run one at a time; hints leave after the commit instead, coalesced, through the bus.
 */
export interface Hints {
  session(organizationId: string, sessionId: string): void;
  wake(notice: WakeNotice): void;
}

interface Gathered {
  sessions: Map<string, SessionHint>;
  wakes: WakeNotice[];
  push: PushHint[];
}

const empty = (): Gathered => ({ sessions: new Map(), wakes: [], push: [] });
const isEmpty = (gathered: Gathered) => gathered.sessions.size === 0 && gathered.wakes.length === 0 && gathered.push.length === 0;
const gathering = new WeakMap<object, Gathered>();

/** The hints `tx` gathers; `tx` must be a transaction opened by `transaction()`. */
export function hintsOf(tx: Queryable): Hints {
  const gathered = gathering.get(tx);
  if (!gathered) throw new Error("hints are gathered inside transaction() only: they are sent once it commits");
  return { session: (o, s) => void gathered.sessions.set(s, { o, s }), wake: (notice) => void gathered.wakes.push(notice) };
}

/** Starts gathering hints on a new transaction's connection; `publish` sends them (after its commit). */
export function gatherHints(tx: object): { publish(sql: Sql): void } {
  const gathered = empty();
  gathering.set(tx, gathered);
  return { publish: (sql) => publisherOf(sql).add(gathered) };
}

/**
 * One publisher per client: hints from every transaction that committed meanwhile leave in one
 * publish, at most one in flight, so under load a publish carries many hints and at rest a hint
 * leaves on the next turn of the event loop. A failed publish loses its hints: the runners'
 * backstop poll, `Last-Event-ID` replay and the waiters' timeouts cover it.
 */
function createPublisher(sql: Sql) {
  let bus: WakeBus | undefined;
  let pending = empty();
  let busy = false;
  let stats = { published: 0, statements: 0, failed: 0 };
  const flush = async () => {
    const batch = pending;
    pending = empty();
    if (isEmpty(batch)) return;
    try {
      await (bus ??= postgresWakeBus({ sql })).publish({ sessions: [...batch.sessions.values()], wakes: batch.wakes, ...(batch.push.length > 0 ? { push: batch.push } : {}) });
      stats = { ...stats, published: stats.published + batch.sessions.size + batch.wakes.length + batch.push.length, statements: stats.statements + 1 };
    } catch {
      stats = { ...stats, failed: stats.failed + 1 };
    }
  };
  const drain = async () => {
    busy = true;
    while (!isEmpty(pending)) await flush();
    busy = false;
  };
  return {
    add: (gathered: Gathered) => {
      if (isEmpty(gathered)) return;
      for (const [id, hint] of gathered.sessions) pending.sessions.set(id, hint);
      pending.wakes.push(...gathered.wakes);
      pending.push.push(...gathered.push);
      if (!busy) {
        busy = true;
        setImmediate(() => void drain());
      }
    },
    /** Sends this client's hints through `next` from now on (default: NOTIFY through the client). */
    route: (next: WakeBus) => void (bus = next),
    stats: () => stats,
  };
}

const publishers = new WeakMap<Sql, ReturnType<typeof createPublisher>>();

/** The publisher of `sql`'s hints (one per client, created on first use). */
export function publisherOf(sql: Sql): ReturnType<typeof createPublisher> {
  let publisher = publishers.get(sql);
  if (!publisher) publishers.set(sql, (publisher = createPublisher(sql)));
  return publisher;
}

/** Tells every process's waiters, soon, that a session changed (outside any transaction). */
export const publishSession = (sql: Sql, organizationId: string, sessionId: string): void =>
  publisherOf(sql).add({ sessions: new Map([[sessionId, { o: organizationId, s: sessionId }]]), wakes: [], push: [] });

/** Sends push hints to every process, soon, coalesced with the other hints (call it after the change committed). */
export const publishPush = (sql: Sql, hints: readonly PushHint[]): void => publisherOf(sql).add({ sessions: new Map(), wakes: [], push: [...hints] });
