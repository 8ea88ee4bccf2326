import type { ReservedSql, Sql } from "postgres";

/** What a statement on a reserved connection rejects with once that connection was lost. */
export class ReservedConnectionLost extends Error {
  readonly code = "CONNECTION_CLOSED";
  constructor(cause: unknown) {
    super("the reserved database connection was lost", { cause });
  }
}

/** What `guardedReserve` rejects with when no connection came within the handle's `connect_timeout`. */
export class ReserveTimedOut extends Error {
  readonly code = "CONNECT_TIMEOUT";
  constructor(seconds: number) {
    super(`no database connection could be reserved within ${seconds} s`);
  }
}

/**
 * `sql.reserve()`, given up after the handle's `connect_timeout` (postgres.js's default, 30 s).
 * postgres.js 3.4.9 loses a waiting reserve when a connection closes and the pool reconnects it
 * for that reserve: the promise never settles (seen under a PostgreSQL restart). One that comes
 * after all is released at once, so the pool gets its connection back.
 */
async function reserveWithin(sql: Sql): Promise<ReservedSql> {
  const seconds = Number(sql.options.connect_timeout ?? 30);
  const reserving = sql.reserve();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReserveTimedOut(seconds)), seconds * 1000);
  });
  try {
    return await Promise.race([reserving, timedOut]);
  } catch (error) {
    if (error instanceof ReserveTimedOut)
      reserving.then(
        (late) => late.release(),
        () => {},
      );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether a statement's error means its connection is gone: postgres.js's own connection errors
 * (`CONNECTION_CLOSED`, `CONNECTION_DESTROYED`, `CONNECT_TIMEOUT`), a socket error (`ECONNRESET`,
 * `EPIPE`…), or a FATAL/PANIC from the server, after which it closes the connection (57P01 on a
 * shutdown or restart).
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof ReservedConnectionLost) return true;
  if (typeof error !== "object" || error === null) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (severity === "FATAL" || severity === "PANIC") return true;
  return typeof code === "string" && /^(CONNECTION_|CONNECT_TIMEOUT$|E[A-Z]+$)/.test(code);
}

/**
 * `sql.reserve()` that never sends on a lost connection. postgres.js 3.4.9 takes a reserved
 * connection back into its pool when the socket closes, but the reserved handle keeps writing to
 * it: a statement sent after the close throws a TypeError from a `setImmediate` callback, which
 * no caller can catch and which ends the process (porsager/postgres#1154, #1208, unfixed in any
 * release), and `release()` puts the dead connection among the open ones, where the next pooled
 * query meets the same fate. So once any statement of the handle failed with a lost connection,
 * every later one rejects with `ReservedConnectionLost` without being sent, and `release()` does
 * nothing (the pool has the connection back already; the server rolled its transaction back).
 */
export async function guardedReserve(sql: Sql): Promise<ReservedSql> {
  const reserved = await reserveWithin(sql);
  let lost: unknown;
  const watch = (error: unknown) => {
    if (lost === undefined && isConnectionLost(error)) lost = error;
    throw error;
  };
  const guard = (pending: object): object =>
    new Proxy(pending, {
      get(target, property) {
        const query = target as Promise<unknown> & { execute(): unknown };
        if (property === "then") {
          return (ok?: (value: unknown) => unknown, ko?: (error: unknown) => unknown) =>
            (lost === undefined ? query.then(undefined, watch) : Promise.reject(new ReservedConnectionLost(lost))).then(ok, ko);
        }
        if (property === "catch") return (ko?: (error: unknown) => unknown) => (guard(target) as Promise<unknown>).then(undefined, ko);
        if (property === "execute")
          return () => {
            if (lost === undefined) query.execute();
            return guard(target);
          };
        return Reflect.get(target, property, target);
      },
    });
  const statement = (result: unknown) => (typeof (result as { then?: unknown } | null)?.then === "function" ? guard(result as object) : result);
  return new Proxy(reserved, {
    apply: (target, self, args) => statement(Reflect.apply(target, self, args)),
    get(target, property) {
      if (property === "unsafe") return (...args: Parameters<Sql["unsafe"]>) => statement(target.unsafe(...args));
      if (property === "release") return () => void (lost === undefined && target.release());
      return Reflect.get(target, property, target);
    },
  });
}
