import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { cleanEnv } from "./consumer-folder.js";

/** A long-running fixture process (a host that serves): its first stdout line, what it printed, and a stop. */
export interface RunningProcess<T> {
  ready: T;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts `node <args>` in `cwd` with `env` (npm's and pnpm's variables removed) and waits for its
 * first stdout line, parsed as JSON: the fixture says where it serves. A process that exits first,
 * or says nothing within `timeoutMs`, fails with what it printed.
 */
export async function startNodeProcess<T>(cwd: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<RunningProcess<T>> {
  const child: ChildProcess = spawn(process.execPath, args, { cwd, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let stdout = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const ready = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the process said nothing in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = () => {
      if (!stdout.includes("\n")) return;
      const line = stdout.slice(0, stdout.indexOf("\n"));
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`the process's first line is not JSON:\n${out}`));
      }
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the process exited (${code}) before it was ready:\n${out}`));
    });
  });
  return {
    ready,
    output: () => out,
    stop: async (graceMs = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
