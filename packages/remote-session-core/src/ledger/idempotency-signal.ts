import type { Sql } from "postgres";
import type { Queryable } from "../queryable.js";

const CHANNEL = "remote_session_idempotency";

interface Listener {
  ready: Promise<boolean>;
  waiters: Map<string, Set<() => void>>;
}

// One LISTEN per client (postgres.js keeps one listening connection for all of them), shared by
// every duplicate waiting in this process.
const listeners = new WeakMap<object, Listener>();

function listenerOf(sql: Queryable): Listener {
  const known = listeners.get(sql);
  if (known) return known;
  const waiters = new Map<string, Set<() => void>>();
  const listen = (sql as Partial<Pick<Sql, "listen">>).listen;
  // A transaction cannot listen, and a pooler may refuse to: then the backoff alone serves.
  const ready =
    typeof listen === "function"
      ? listen
          .call(sql, CHANNEL, (payload: string) => {
            for (const wake of waiters.get(payload) ?? []) wake();
          })
          .then(
            () => true,
            () => false,
          )
      : Promise.resolve(false);
  const listener = { ready, waiters };
  listeners.set(sql, listener);
  return listener;
}

/** Resolves when `signal` is announced, or after `timeoutMs` (the backstop), whichever is first. */
export async function waitForSignal(sql: Queryable, signal: string, timeoutMs: number): Promise<void> {
  const { ready, waiters } = listenerOf(sql);
  await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, timeoutMs))]);
  await new Promise<void>((resolve) => {
    const set = waiters.get(signal) ?? new Set();
    const wake = () => {
      clearTimeout(timer);
      set.delete(wake);
      if (set.size === 0) waiters.delete(signal);
      resolve();
    };
    const timer = setTimeout(wake, timeoutMs);
    set.add(wake);
    waiters.set(signal, set);
  });
}

/** Wakes every process's waiters of `signal` (an opaque digest: no key or argument travels). */
export async function announceSignal(sql: Queryable, signal: string): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${signal})`;
}
