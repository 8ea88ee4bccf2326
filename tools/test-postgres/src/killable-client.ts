import type { Sql } from "postgres";

/** What every statement of a killed process's client rejects with. */
export class ProcessKilled extends Error {
  constructor() {
    super("the process was killed");
  }
}

/**
 * The database client of a process killed (kill -9) once it has sent `lives` statements: it
 * sends nothing after that — no cleanup, no rollback of its own — and a transaction it was in is
 * rolled back as the server does when the connection drops. Statements are counted when they are
 * sent (awaited or executed, once each), so a test can kill a flow after each of them in turn; `sent()`
 * says how many a whole flow sends. `step()` counts another effect of the process against the
 * same lives (a request to a peer: call it before sending one), and throws once it is dead.
 */
export function killableClient(sql: Sql, lives: number): { sql: Sql; sent(): number; step(): void } {
  let sent = 0;
  const dead = () => sent >= lives;
  const send = () => {
    if (dead()) throw new ProcessKilled();
    sent++;
  };
  const statement = (pending: object) => {
    // Once: a statement executed and then awaited (a guarded connection awaits what it executed)
    // was sent once, and a process alive when it sent it sees its answer.
    let counted = false;
    const sendOnce = () => {
      if (counted) return;
      send();
      counted = true;
    };
    return new Proxy(pending, {
      get(target, property) {
        if (property === "then") {
          return (ok?: (value: unknown) => unknown, ko?: (error: unknown) => unknown) => {
            try {
              sendOnce();
            } catch (error) {
              return Promise.reject(error).then(ok, ko);
            }
            return (target as Promise<unknown>).then(ok, ko);
          };
        }
        if (property === "execute")
          return () => {
            sendOnce();
            return (target as { execute(): unknown }).execute();
          };
        return Reflect.get(target, property, target);
      },
    });
  };
  const client = (real: Sql): Sql =>
    new Proxy(real, {
      apply: (target, self, args) => statement(Reflect.apply(target, self, args) as object),
      get(target, property) {
        if (property === "unsafe") return (...args: Parameters<Sql["unsafe"]>) => statement(target.unsafe(...args));
        if (property === "reserve") {
          return async () => {
            if (dead()) throw new ProcessKilled();
            return client(await target.reserve());
          };
        }
        if (property === "release" && "release" in target) {
          const reserved = target as unknown as Sql & { release(): void };
          return () => {
            if (!dead()) return reserved.release();
            void reserved`rollback`.then(
              () => reserved.release(),
              () => reserved.release(),
            );
          };
        }
        return Reflect.get(target, property, target);
      },
    }) as Sql;
  return { sql: client(sql), sent: () => sent, step: send };
}
