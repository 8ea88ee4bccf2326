// The idle-desktops bench's processes: how the controller forks and asks them, and what it tells its farms.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A signed-in desktop: its runner id and the runner token its mint answered. */
export interface Desktop {
  runnerId: string;
  token: string;
}

/** What the controller sends a farm: its desktops, the one loopback address its sockets leave from, and how fast to open them. */
export interface FarmStart {
  baseUrl: string;
  desktops: Desktop[];
  localAddress: string;
  openPerSecond: number;
}

/** What a farm answers to "stats": counts since it started. */
export interface FarmStats {
  /** Runner requests sent, by route (`events` is a wake-stream open). */
  requests: Record<string, number>;
  /** Answers by route and status (`events 503`, `tasks/claim-next 200`). */
  statuses: Record<string, number>;
  /** Failures and closes, by kind. */
  warns: Record<string, number>;
  started: number;
  rss: number;
}

/** A forked child (`--import tsx`, plus `execArgv`) and a way to send it a message and wait for its answer. */
export function child(module: string, execArgv: string[] = []) {
  const process_: ChildProcess = fork(fileURLToPath(new URL(module, import.meta.url)), {
    execArgv: [...execArgv, "--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  // One question at a time per child: answers come back in order.
  let queue: Promise<unknown> = Promise.resolve();
  const ask = <T>(message: unknown, timeoutMs = 60_000): Promise<T> => {
    const asked = queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          const done = () => {
            clearTimeout(timer);
            process_.off("exit", exited);
            process_.off("message", answered);
          };
          const exited = (code: number | null) => {
            done();
            reject(new Error(`${module} exited (${code})`));
          };
          const answered = (answer: unknown) => {
            done();
            resolve(answer as T);
          };
          const timer = setTimeout(() => {
            done();
            reject(new Error(`${module} did not answer ${JSON.stringify(message).slice(0, 80)} in ${timeoutMs} ms`));
          }, timeoutMs);
          process_.once("exit", exited);
          process_.once("message", answered);
          process_.send(message as never);
        }),
    );
    queue = asked.catch(() => {});
    return asked;
  };
  return { process: process_, ask, pid: () => process_.pid! };
}
export type Child = ReturnType<typeof child>;
