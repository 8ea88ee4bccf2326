import { randomUUID } from "node:crypto";
import type { Sql } from "postgres";
import type { WakeNotice } from "./channels.js";
import { createHintPublisher, type HintPublisher } from "./hints.js";
import { postgresWakeBus, type PushHint, type RevokeHint, type WakeBus } from "./wake-bus.js";

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
  announceSession(organizationId: string, sessionId: string): void;
  /**
   * Sends push hints to every process (this one too), soon, coalesced with the other hints; call
   * it once the change they tell of has committed. A lost one is covered by the push streams'
   * own backstop.
   */
  publishPush(hints: readonly PushHint[]): void;
  /**
   * Delivers every process's push hints to `handlers.push`, and calls `handlers.resync` when
   * some may have been lost (the bus reconnected), until the returned function is called.
   */
  subscribePush(handlers: PushSubscriber): () => void;
  /**
   * Delivers every process's revoke hints to `handlers.revoked`, and calls `handlers.resync` when
   * some may have been lost (the bus reconnected), until the returned function is called.
   */
  subscribeRevokes(handlers: RevokeSubscriber): () => void;
  /** Resolves once the bus listens and carried the start-up probe's hints back (session and push). */
  readonly ready: Promise<void>;
  /** Where this hub's hints leave: its bus, given at construction. `transaction()` publishes through it. */
  readonly publisher: HintPublisher;
  stats(): { runnerStreams: number; sessionWaiters: number; pushSubscribers: number; listens: number };
  close(): Promise<void>;
}

/** What a push package hands the hub to hear push hints. */
export interface PushSubscriber {
  push(hints: readonly PushHint[]): void;
  resync(): void;
}

/** What a registration cache hands the hub to hear revoke hints. */
export interface RevokeSubscriber {
  revoked(hints: readonly RevokeHint[]): void;
  resync(): void;
}

/** Open streams one process keeps, per runner and per member. */
export interface StreamLimits {
  /** Default 2: a desktop reconnecting before its old stream closed. */
  perRunner: number;
  /** Default 20. */
  perMember: number;
}

export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ perRunner: 2, perMember: 20 });

/**
 * One bus subscription per process (by default one LISTEN connection), fanned out in process to
 * the streams and readers that care. A hint only says "look again": after the bus reconnects,
 * hints sent meanwhile may be lost, so every stream and waiter is told to look again.
 */

export function createWakeHub(options: {
  sql: Sql;
  /**
   * The bus hints travel on between processes. Default: PostgreSQL LISTEN/NOTIFY through `sql`,
   * listening on `listen`.
   */
  bus?: WakeBus;
  /**
   * What sends this hub's hints (the transactions' too). Default: a publisher of its own on `bus`;
   * a channel passes the one it built on the same bus.
   */
  publisher?: HintPublisher;
  /**
   * The client that LISTENs (default bus only): a direct connection to the primary, never through
   * a pooler in transaction mode (which drops LISTEN without an error). Default `sql`.
   */
  listen?: Sql;
  /** How long the start-up probe waits for its own hint (sent through the bus). Default 5 s. */
  probeTimeoutMs?: number;
  logger?: { warn(message: string, fields?: Record<string, unknown>): void };
  streamLimits?: Partial<StreamLimits>;
}): WakeHub {
  const limits = { ...DEFAULT_STREAM_LIMITS, ...options.streamLimits };
  const bus = options.bus ?? postgresWakeBus({ sql: options.sql, ...(options.listen ? { listen: options.listen } : {}) });
  const publisher = options.publisher ?? createHintPublisher(bus);
  const hub: HubState = { runners: new Map(), sessions: new Map(), pushSubscribers: new Set(), revokeSubscribers: new Set(), listens: 0, streams: 0 };
  const subscribed = bus.subscribe({
    wakes: (notices) => deliverWakes(hub, notices),
    sessions: (ids) => {
      for (const sessionId of ids) wakeSession(hub, sessionId);
    },
    push: (hints) => {
      for (const subscriber of [...hub.pushSubscribers]) subscriber.push(hints);
    },
    revokes: (hints) => {
      for (const subscriber of [...hub.revokeSubscribers]) subscriber.revoked(hints);
    },
    resync: () => {
      hub.listens++;
      resyncAll(hub);
    },
    unreadable: (where) => options.logger?.warn("wake hub: unreadable hint", { where, bus: bus.name }),
  });
  const ready = subscribed.then(() => {
    hub.listens++;
    return probe(
      bus,
      (sessionId, timeoutMs) => waitFor(hub, sessionId, timeoutMs),
      (subscriber) => subscribePush(hub, subscriber),
      options.probeTimeoutMs ?? 5_000,
    );
  });
  return {
    ready,
    publisher,
    subscribeRunner: (runner, deliver, evict = () => {}) => subscribeRunner(hub, limits, runner, deliver, evict),
    runnerStreamCount: (runner) => runnerStreamCount(hub, runner),
    waitForSession: async (sessionId, timeoutMs, signal) => void (await waitFor(hub, sessionId, timeoutMs, signal)),
    announceSession: (organizationId, sessionId) => publisher.session(organizationId, sessionId),
    publishPush: (hints) => publisher.push(hints),
    subscribePush: (subscriber) => subscribePush(hub, subscriber),
    subscribeRevokes: (subscriber) => {
      hub.revokeSubscribers.add(subscriber);
      return () => void hub.revokeSubscribers.delete(subscriber);
    },
    stats: () => hubStats(hub),
    close: async () => {
      await bus.close();
      resyncAll(hub);
      hub.runners.clear();
      hub.streams = 0;
      hub.pushSubscribers.clear();
      hub.revokeSubscribers.clear();
    },
  };
}

/** One open runner stream, as the hub holds it. */
interface RunnerStream {
  runnerId: string;
  deliver: (signal: WakeSignal) => void;
  evict: () => void;
}

/** What one hub holds in process: its streams, waiters and subscribers, keyed as they are looked up. */
interface HubState {
  /** Per member (`memberKey`). */
  runners: Map<string, Set<RunnerStream>>;
  /** Per session id: its waiters' wake functions. */
  sessions: Map<string, Set<() => void>>;
  pushSubscribers: Set<PushSubscriber>;
  revokeSubscribers: Set<RevokeSubscriber>;
  /** How many times the bus started listening (the first time and each reconnect). */
  listens: number;
  /** Open runner streams, all members together (a host's stream budget reads it at every open). */
  streams: number;
}

function hubStats(hub: HubState): ReturnType<WakeHub["stats"]> {
  return {
    runnerStreams: hub.streams,
    sessionWaiters: [...hub.sessions.values()].reduce((n, set) => n + set.size, 0),
    pushSubscribers: hub.pushSubscribers.size,
    listens: hub.listens,
  };
}

function memberKey(organizationId: string, memberId: string): string {
  return `${organizationId}\u0000${memberId}`;
}

/** Tells every stream, waiter and subscriber to look again. */
function resyncAll(hub: HubState): void {
  for (const set of hub.runners.values()) for (const subscriber of set) subscriber.deliver({ kind: "resync" });
  for (const sessionId of [...hub.sessions.keys()]) wakeSession(hub, sessionId);
  for (const subscriber of [...hub.pushSubscribers]) subscriber.resync();
  for (const subscriber of [...hub.revokeSubscribers]) subscriber.resync();
}

function subscribePush(hub: HubState, subscriber: PushSubscriber): () => void {
  hub.pushSubscribers.add(subscriber);
  return () => void hub.pushSubscribers.delete(subscriber);
}

function wakeSession(hub: HubState, sessionId: string): void {
  const waiters = hub.sessions.get(sessionId);
  hub.sessions.delete(sessionId);
  for (const wake of waiters ?? []) wake();
}

function deliverWakes(hub: HubState, notices: readonly WakeNotice[]): void {
  for (const notice of notices) {
    for (const subscriber of hub.runners.get(memberKey(notice.o, notice.m)) ?? []) {
      if (notice.r === null || notice.r === subscriber.runnerId) subscriber.deliver({ kind: "task", notice });
    }
  }
}

/** Waits for a session's change: true when woken, false after `timeoutMs` or on abort. */
function waitFor(hub: HubState, sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const done = (woken: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", notWoken);
      hub.sessions.get(sessionId)?.delete(wake);
      resolve(woken);
    };
    const wake = () => done(true);
    const notWoken = () => done(false);
    // An aborted signal fires no more: waiting on it would hold the waiter for all of timeoutMs.
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(notWoken, timeoutMs);
    signal?.addEventListener("abort", notWoken, { once: true });
    const set = hub.sessions.get(sessionId) ?? new Set();
    set.add(wake);
    hub.sessions.set(sessionId, set);
  });
}

function subscribeRunner(hub: HubState, limits: StreamLimits, runner: RunnerSubscriber, deliver: (signal: WakeSignal) => void, evict: () => void): () => void {
  const key = memberKey(runner.organizationId, runner.memberId);
  const entry = { runnerId: runner.runnerId, deliver, evict };
  const set = hub.runners.get(key) ?? new Set();
  set.add(entry);
  hub.runners.set(key, set);
  hub.streams++;
  // A Set keeps insertion order: the first match is the oldest stream.
  const same = [...set].filter((e) => e.runnerId === runner.runnerId);
  if (same.length > limits.perRunner) same[0]!.evict();
  else if (set.size > limits.perMember) [...set][0]!.evict();
  return () => {
    if (!set.delete(entry)) return;
    hub.streams--;
    if (set.size === 0) hub.runners.delete(key);
  };
}

function runnerStreamCount(hub: HubState, runner: RunnerSubscriber): number {
  return [...(hub.runners.get(memberKey(runner.organizationId, runner.memberId)) ?? [])].filter((e) => e.runnerId === runner.runnerId).length;
}

/**
 * Sends a session hint and a push hint through the bus and waits for both to come back: with
 * PostgreSQL, a pooler in transaction mode between the pool and the LISTEN connection (or the two
 * on different databases) drops them silently, and the runners and push streams would fall back
 * to their slow backstops with nothing reporting it; a bus that does not carry push hints would
 * do the same to push. Fails loudly instead, in the bus's own words when it has some (`unheard`).
 */
async function probe(
  bus: WakeBus,
  heard: (id: string, timeoutMs: number) => Promise<boolean>,
  subscribePush: (subscriber: PushSubscriber) => () => void,
  timeoutMs: number,
): Promise<void> {
  const id = `probe_${randomUUID().replaceAll("-", "")}`;
  const arrived = heard(id, timeoutMs);
  let unsubscribe = () => {};
  const pushArrived = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    unsubscribe = subscribePush({
      push: (hints) => {
        if (!hints.some((hint) => hint.m === id)) return;
        clearTimeout(timer);
        resolve(true);
      },
      resync: () => {},
    });
  });
  try {
    await bus.publish({ sessions: [{ o: "probe", s: id }], wakes: [], push: [{ o: "probe", m: id, k: "events" }] });
    const [session, push] = await Promise.all([arrived, pushArrived]);
    if (!session) {
      throw new Error(bus.unheard?.(timeoutMs) ?? `the wake hub did not receive a hint it sent through ${bus.name} within ${timeoutMs} ms`);
    }
    if (!push)
      throw new Error(`the wake hub did not receive a push hint it sent through ${bus.name} within ${timeoutMs} ms: the bus does not carry push hints`);
  } finally {
    unsubscribe();
  }
}
