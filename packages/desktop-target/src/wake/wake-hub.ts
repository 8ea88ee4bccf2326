import { randomUUID } from "node:crypto";
import type { Sql } from "postgres";
import { SESSION_CHANNEL, WAKE_CHANNEL, type WakeNotice } from "./channels.js";
import { publishSession, sessionIdsOf, wakeNoticesOf } from "./hints.js";

/** What a runner's stream is told: a hint for one task, or "look again" after the listener reconnected. */
export type WakeSignal = { kind: "task"; notice: WakeNotice } | { kind: "resync" };

export interface RunnerSubscriber {
  organizationId: string;
  memberId: string;
  runnerId: string;
}

/** The in-process side of the wake-up path. */
export interface WakeHub {
  /** Delivers hints meant for this runner until the returned function is called. */
  /**
   * Registers an open stream. Past the caps (streams per runner, per member, in this process) the
   * oldest stream of that runner, else of that member, is evicted: the newest wins.
   */
  subscribeRunner(runner: RunnerSubscriber, deliver: (signal: WakeSignal) => void, evict?: () => void): () => void;
  /** How many wake streams this process holds for the runner. */
  runnerStreamCount(runner: RunnerSubscriber): number;
  /** Resolves when the session changes (or the listener resynced), after `timeoutMs`, or on abort. */
  waitForSession(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * Tells every process's waiters that a session changed, for changes made outside this target's
   * transactions (another target's session moved through the capability).
   */
  announceSession(sessionId: string): void;
  /** Resolves once LISTEN is in place. */
  readonly ready: Promise<void>;
  stats(): { runnerStreams: number; sessionWaiters: number; listens: number };
  close(): Promise<void>;
}

/**
 * One LISTEN connection per process (postgres.js keeps a single dedicated connection for all of
 * a client's listens and re-establishes it by itself after a database restart), fanned out in
 * process to the streams and readers that care. A NOTIFY is only a hint: after a reconnect,
 * hints sent meanwhile are lost, so every stream and waiter is told to look again.
 */
/** Open streams one process keeps, per runner and per member. */
export interface StreamLimits {
  /** Default 2: a desktop reconnecting before its old stream closed. */
  perRunner: number;
  /** Default 20. */
  perMember: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perRunner: 2, perMember: 20 };

export function createWakeHub(options: {
  sql: Sql;
  /**
   * The client that LISTENs: a direct connection to the primary, never through a pooler in
   * transaction mode (which drops LISTEN without an error). Default `sql`. Hints are sent through
   * `sql`; at start the hub sends itself one and fails `ready` if it does not arrive.
   */
  listen?: Sql;
  /** How long the start-up probe waits for its own hint. Default 5 s. */
  probeTimeoutMs?: number;
  logger?: { warn(message: string, fields?: Record<string, unknown>): void };
  streamLimits?: Partial<StreamLimits>;
}): WakeHub {
  const limits = { ...DEFAULT_STREAM_LIMITS, ...options.streamLimits };
  const runners = new Map<string, Set<{ runnerId: string; deliver: (signal: WakeSignal) => void; evict: () => void }>>();
  const sessions = new Map<string, Set<() => void>>();
  let listens = 0;

  const memberKey = (organizationId: string, memberId: string) => `${organizationId}\u0000${memberId}`;
  const resync = () => {
    for (const set of runners.values()) for (const subscriber of set) subscriber.deliver({ kind: "resync" });
    for (const sessionId of [...sessions.keys()]) wakeSession(sessionId);
  };
  const wakeSession = (sessionId: string) => {
    const waiters = sessions.get(sessionId);
    sessions.delete(sessionId);
    for (const wake of waiters ?? []) wake();
  };
  const onWake = (payload: string) => {
    let notices: WakeNotice[];
    try {
      notices = wakeNoticesOf(payload);
    } catch {
      options.logger?.warn("wake hub: unreadable notification", { channel: WAKE_CHANNEL });
      return;
    }
    for (const notice of notices) {
      for (const subscriber of runners.get(memberKey(notice.o, notice.m)) ?? []) {
        if (notice.r === null || notice.r === subscriber.runnerId) subscriber.deliver({ kind: "task", notice });
      }
    }
  };
  const onSessions = (payload: string) => sessionIdsOf(payload).forEach(wakeSession);
  /** Waits for a session's change: true when woken, false after `timeoutMs` or on abort. */
  const waitFor = (sessionId: string, timeoutMs: number, signal?: AbortSignal) =>
    new Promise<boolean>((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", notWoken);
        sessions.get(sessionId)?.delete(wake);
        resolve(woken);
      };
      const wake = () => done(true);
      const notWoken = () => done(false);
      const timer = setTimeout(notWoken, timeoutMs);
      signal?.addEventListener("abort", notWoken, { once: true });
      const set = sessions.get(sessionId) ?? new Set();
      set.add(wake);
      sessions.set(sessionId, set);
    });
  // onlisten runs on every (re)connect of the listening connection; after the first, resync.
  const handles: ReturnType<Sql["listen"]>[] = [];
  const listening = (channel: string) =>
    new Promise<void>((resolve) => {
      let first = true;
      const handle = listener.listen(channel, channel === WAKE_CHANNEL ? onWake : onSessions, () => {
        listens++;
        if (first) {
          first = false;
          resolve();
        } else resync();
      });
      handle.catch(() => {});
      handles.push(handle);
    });
  const listener = options.listen ?? options.sql;
  const ready = Promise.all([listening(WAKE_CHANNEL), listening(SESSION_CHANNEL)]).then(() => probe(options.sql, waitFor, options.probeTimeoutMs ?? 5_000));

  return {
    ready,
    subscribeRunner: (runner, deliver, evict = () => {}) => {
      const key = memberKey(runner.organizationId, runner.memberId);
      const entry = { runnerId: runner.runnerId, deliver, evict };
      const set = runners.get(key) ?? new Set();
      set.add(entry);
      runners.set(key, set);
      // A Set keeps insertion order: the first match is the oldest stream.
      const same = [...set].filter((e) => e.runnerId === runner.runnerId);
      if (same.length > limits.perRunner) same[0]!.evict();
      else if (set.size > limits.perMember) [...set][0]!.evict();
      return () => {
        set.delete(entry);
        if (set.size === 0) runners.delete(key);
      };
    },
    runnerStreamCount: (runner) => [...(runners.get(memberKey(runner.organizationId, runner.memberId)) ?? [])].filter((e) => e.runnerId === runner.runnerId).length,
    waitForSession: async (sessionId, timeoutMs, signal) => void (await waitFor(sessionId, timeoutMs, signal)),
    announceSession: (sessionId) => publishSession(options.sql, sessionId),
    stats: () => ({
      runnerStreams: [...runners.values()].reduce((n, set) => n + set.size, 0),
      sessionWaiters: [...sessions.values()].reduce((n, set) => n + set.size, 0),
      listens,
    }),
    close: async () => {
      await Promise.all(handles.map(async (handle) => (await handle).unlisten()));
      resync();
      runners.clear();
    },
  };
}

/**
 * Sends a hint through the pool and waits for it on the LISTEN connection: a pooler in
 * transaction mode between them (or the two on different databases) drops it silently, and the
 * runners would fall back to their slow poll with nothing reporting it. Fails loudly instead.
 */
async function probe(sql: Sql, heard: (id: string, timeoutMs: number) => Promise<boolean>, timeoutMs: number): Promise<void> {
  const id = `probe_${randomUUID()}`;
  const arrived = heard(id, timeoutMs);
  await sql`select pg_notify(${SESSION_CHANNEL}, ${id})`;
  if (!(await arrived)) {
    throw new Error(
      `the wake hub's LISTEN connection did not receive a hint the gateway sent within ${timeoutMs} ms: a connection pooler in transaction mode (or another database) sits between them; give the hub a direct connection to the primary`,
    );
  }
}
