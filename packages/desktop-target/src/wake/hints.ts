import type { Queryable } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { SESSION_CHANNEL, WAKE_CHANNEL, type WakeNotice } from "./channels.js";

/**
 * What a transaction tells the other gateway processes once it has committed: sessions that
 * changed, tasks to wake runners for. A NOTIFY inside the transaction would take PostgreSQL's
 * server-wide notify lock at commit and hold it through the WAL flush, so notifying commits
 * would run one at a time; hints leave after the commit instead, coalesced.
 */
export interface Hints {
  session(sessionId: string): void;
  wake(notice: WakeNotice): void;
}

interface Gathered {
  sessions: Set<string>;
  wakes: WakeNotice[];
}

const gathering = new WeakMap<object, Gathered>();

/** The hints `tx` gathers; `tx` must be a transaction opened by `transaction()`. */
export function hintsOf(tx: Queryable): Hints {
  const gathered = gathering.get(tx);
  if (!gathered) throw new Error("hints are gathered inside transaction() only: they are sent once it commits");
  return { session: (id) => void gathered.sessions.add(id), wake: (notice) => void gathered.wakes.push(notice) };
}

/** Starts gathering hints on a new transaction's connection; `publish` sends them (after its commit). */
export function gatherHints(tx: object): { publish(sql: Sql): void } {
  const gathered: Gathered = { sessions: new Set(), wakes: [] };
  gathering.set(tx, gathered);
  return { publish: (sql) => publisherOf(sql).add(gathered) };
}

// NOTIFY payloads stay under PostgreSQL's 8 000-byte limit.
const MAX_PAYLOAD = 7_000;

/**
 * One publisher per client: hints from every transaction that committed meanwhile leave in one
 * statement, at most one in flight, so under load a notifying commit carries many hints and at
 * rest a hint leaves on the next turn of the event loop. A failed publish loses its hints: the
 * runners' backstop poll, `Last-Event-ID` replay and the waiters' timeouts cover it.
 */
function createPublisher(sql: Sql) {
  let pending: Gathered = { sessions: new Set(), wakes: [] };
  let busy = false;
  let stats = { published: 0, statements: 0, failed: 0 };
  const flush = async () => {
    const batch = pending;
    pending = { sessions: new Set(), wakes: [] };
    const parts = [
      ...chunks([...batch.sessions], (id) => id.length + 1, (ids) => ids.join(",")).map((payload) => [SESSION_CHANNEL, payload] as const),
      ...chunks(batch.wakes, (notice) => JSON.stringify(notice).length + 1, (notices) => JSON.stringify(notices)).map((payload) => [WAKE_CHANNEL, payload] as const),
    ];
    if (parts.length === 0) return;
    try {
      await sql`select pg_notify(c, p) from unnest(${parts.map((part) => part[0])}::text[], ${parts.map((part) => part[1])}::text[]) as hint(c, p)`;
      stats = { ...stats, published: stats.published + batch.sessions.size + batch.wakes.length, statements: stats.statements + 1 };
    } catch {
      stats = { ...stats, failed: stats.failed + 1 };
    }
  };
  const drain = async () => {
    busy = true;
    while (pending.sessions.size > 0 || pending.wakes.length > 0) await flush();
    busy = false;
  };
  return {
    add: (gathered: Gathered) => {
      if (gathered.sessions.size === 0 && gathered.wakes.length === 0) return;
      for (const id of gathered.sessions) pending.sessions.add(id);
      pending.wakes.push(...gathered.wakes);
      if (!busy) {
        busy = true;
        setImmediate(() => void drain());
      }
    },
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

/** Splits items into payloads that each fit a NOTIFY (`size`: an item's rendered length plus its separator). */
function chunks<T>(items: readonly T[], size: (item: T) => number, render: (items: T[]) => string): string[] {
  const out: string[] = [];
  let current: T[] = [];
  let length = 2;
  for (const item of items) {
    if (current.length > 0 && length + size(item) > MAX_PAYLOAD) {
      out.push(render(current));
      current = [];
      length = 2;
    }
    current.push(item);
    length += size(item);
  }
  if (current.length > 0) out.push(render(current));
  return out;
}

/** Tells every process's waiters, soon, that a session changed (outside any transaction). */
export const publishSession = (sql: Sql, sessionId: string): void => publisherOf(sql).add({ sessions: new Set([sessionId]), wakes: [] });

/** The session ids of one session-channel payload (one id, or several joined with commas). */
export const sessionIdsOf = (payload: string): string[] => payload.split(",").filter(Boolean);

/** The wake notices of one wake-channel payload (a notice, or an array of them). */
export function wakeNoticesOf(payload: string): WakeNotice[] {
  const parsed = JSON.parse(payload) as WakeNotice | WakeNotice[];
  return Array.isArray(parsed) ? parsed : [parsed];
}
