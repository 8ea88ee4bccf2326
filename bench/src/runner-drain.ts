import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** What the runner process reports of its drain. */
export interface RunnerDrain {
  done: number;
  conflicts: number;
  requests: number;
  seconds: number;
  cpuMs: number;
}

/**
 * Forks `runner-process.ts` and has its clients (one per token) drain through `baseUrl` with the
 * protocol-3 loop. `reported` resolves with its report as soon as it is sent, so CPU read then
 * leaves out the process's exit; `exited` resolves once it has exited.
 */
export function drainThroughRunners(baseUrl: string, tokens: readonly string[]): { reported: Promise<RunnerDrain>; exited: Promise<unknown> } {
  const runners = fork(fileURLToPath(new URL("./runner-process.ts", import.meta.url)), { execArgv: ["--import", "tsx"] });
  const exited = new Promise((resolve) => runners.once("exit", resolve));
  runners.send({ baseUrl, tokens, loop: "next" });
  const reported = new Promise<RunnerDrain>((resolve, reject) => {
    runners.once("message", (message) => resolve(message as RunnerDrain));
    runners.once("exit", (code) => reject(new Error(`the runner process exited (${code})`)));
  });
  return { reported, exited };
}
