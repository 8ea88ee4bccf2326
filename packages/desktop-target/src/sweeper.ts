import type { Logger } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { silentLogger } from "@openwork/remote-session-core";
import { sweepTasks } from "./store/sweep-tasks.js";

export interface SweeperOptions {
  sql: Sql;
  /** Pause between sweeps. Default 2 s: with a 30 s lease, a lost runner is `interrupted` within 32 s. */
  intervalMs?: number;
  /** Wake-up hints older than this are deleted (resume after `Last-Event-ID` reaches back this far). Default 10 min. */
  wakeRetentionMs?: number;
  logger?: Logger;
}

/**
 * Starts the sweeper: lost leases → `interrupted`, missed deadlines → `expired`. Safe to run on
 * every replica at once (each move is one guarded update). Returns `stop()`.
 */
export function startSweeper(options: SweeperOptions): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 2_000;
  const retentionSeconds = (options.wakeRetentionMs ?? 10 * 60_000) / 1000;
  const logger = options.logger ?? silentLogger;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sweeps = 0;
  let running: Promise<void> = Promise.resolve();

  const sweep = async () => {
    try {
      const moved = await sweepTasks(options.sql);
      if (moved.interrupted + moved.expired > 0) logger.info("desktop sweeper: tasks moved", moved);
      if (++sweeps % 30 === 0) {
        await options.sql`delete from desktop_wake where created_at < now() - make_interval(secs => ${retentionSeconds})`;
      }
    } catch (error) {
      logger.warn("desktop sweeper: sweep failed", { error: error instanceof Error ? error.message : String(error) });
    }
  };
  const loop = () => {
    if (stopped) return;
    running = sweep().finally(() => {
      if (!stopped) timer = setTimeout(loop, intervalMs);
    });
  };
  loop();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
