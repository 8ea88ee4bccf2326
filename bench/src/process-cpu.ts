// CPU time of processes on this machine, read from /proc (Linux): a process's own user and system
// time, and a PostgreSQL cluster's (the postmaster, every live backend, and what exited backends
// spent, which the kernel adds to the postmaster's children's times when it reaps them).
import { readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

interface ProcStat {
  ppid: number;
  /** utime + stime, in ms. */
  ownMs: number;
  /** cutime + cstime (reaped children), in ms. */
  reapedMs: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // it exited between the listing and the read
  }
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ms = (i: number) => (Number(fields[i]) * 1000) / TICKS_PER_SECOND;
  // fields[0] is the state (field 3 of proc(5)); ppid is field 4, utime..cstime 14..17.
  return { ppid: Number(fields[1]), ownMs: ms(11) + ms(12), reapedMs: ms(13) + ms(14) };
}

/** A process's own CPU time so far (all its threads), in ms. */
export function processCpuMs(pid: number): number {
  const stat = readStat(pid);
  if (!stat) throw new Error(`no process ${pid}`);
  return stat.ownMs;
}

/** A PostgreSQL cluster's CPU time so far, in ms: the postmaster, its live children, and the reaped ones. */
export function clusterCpuMs(postmasterPid: number): number {
  const postmaster = readStat(postmasterPid);
  if (!postmaster) throw new Error(`no postmaster ${postmasterPid}`);
  let total = postmaster.ownMs + postmaster.reapedMs;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.ppid === postmasterPid) total += stat.ownMs;
  }
  return total;
}

/** The postmaster of the server `sql` is connected to (the parent of its backend; the server must run on this machine). */
export async function postmasterOf(sql: { unsafe(query: string): Promise<unknown> }): Promise<number> {
  const [{ pid }] = (await sql.unsafe("select pg_backend_pid() as pid")) as [{ pid: number }];
  const stat = readStat(pid);
  if (!stat) throw new Error("the database server does not run on this machine: its CPU cannot be read");
  return stat.ppid;
}

/** This process's CPU time (user + system) since `start` (a `process.cpuUsage()`), in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/** `ms` of CPU spread over `n` tasks, in whole µs per task. */
export const perTask = (ms: number, n: number) => +((ms * 1000) / n).toFixed(0);

/** The CPU columns of a server's row: its process, its PostgreSQL cluster, and both. */
export function serverCpuColumns(processMs: number, clusterMs: number, n: number) {
  return {
    "process µs/task": perTask(processMs, n),
    "PostgreSQL µs/task": perTask(clusterMs, n),
    "server µs/task": perTask(processMs + clusterMs, n),
  };
}
