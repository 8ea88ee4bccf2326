import { errorFacts, type Logger, pruneLedger, silentLogger } from "@openwork/remote-session-core";
import type { LedgerRetention } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import { type DesktopTimings, resolveTimings } from "./desktop-timings.js";
import { builtInDialects, createDialectSet, type DialectSet } from "./dialects/index.js";
import type { HostWorkKind } from "./host-work-kind.js";
import { seenAt } from "./store/replica-presence.js";
import { sweepTasks } from "./store/sweep-tasks.js";
import type { HintPublisher } from "./wake/hints.js";

export interface SweeperOptions {
  sql: Sql;
  /** Where the hints of what a sweep moved leave (the wake hub's publisher): readers waiting on those sessions wake. */
  publisher: HintPublisher;
  /**
   * The channel's timings the sweeper uses: `sweepIntervalMs` (the pause between sweeps) and
   * `presenceWindowMs` (an OpenWork desktop unseen this long mid-turn loses its turn). Default:
   * `DEFAULT_DESKTOP_TIMINGS`.
   */
  timings?: Partial<Pick<DesktopTimings, "sweepIntervalMs" | "presenceWindowMs">>;
  /** Wake-up hints older than this are deleted (resume after `Last-Event-ID` reaches back this far). Default 10 min. */
  wakeRetentionMs?: number;
  /** What the ledger keeps (sessions 30 days after their last activity, idempotency keys 24 h), pruned in bounded batches. */
  retention?: LedgerRetention;
  /** Desktops not seen for this long are forgotten. Default 90 days. */
  runnerRetentionMs?: number;
  /** Sweeps between two retention passes. Default 30 (a minute with the default interval). */
  retentionEvery?: number;
  /** Told what each sweep moved (lease losses, expirations): for metrics. */
  onSweep?(moved: { interrupted: number; expired: number }): void;
  /** The dialects the channel knows (`builtInDialects()` by default): which desktops are seen by their polls. */
  dialects?: DialectSet;
  /** The host's own work kinds: each sweep calls their `sweep` (their leases and deadlines are theirs). */
  workKinds?: readonly HostWorkKind[];
  logger?: Logger;
}

/**
 * Starts the sweeper: lost leases → `interrupted`, missed deadlines → `expired`, and every
 * `retentionEvery` sweeps one bounded retention pass (old sessions with their tasks and events,
 * idempotency keys, wake-up hints, desktops long gone). Safe to run on every replica at once
 * (each move is one guarded update; retention picks rows `skip locked`). Returns `stop()`.
 */
/** How long a relayed read's answer waits for its reader (one who got `pending` reads again with its cursor). */
const UNREAD_ANSWER_SECONDS = 5 * 60;

/** Each host kind's own sweep; one that fails is logged and the others still run. */
async function sweepHostKinds(kinds: readonly HostWorkKind[], logger: Logger): Promise<void> {
  for (const kind of kinds) {
    try {
      await kind.sweep?.();
    } catch (error) {
      logger.warn("desktop sweeper: a work kind's sweep failed", { kind: kind.kind, error: errorFacts(error) });
    }
  }
}

export function startSweeper(options: SweeperOptions): { stop(): Promise<void> } {
  const { sweepIntervalMs: intervalMs, presenceWindowMs } = resolveTimings(options.timings);
  const retentionSeconds = (options.wakeRetentionMs ?? 10 * 60_000) / 1000;
  const logger = options.logger ?? silentLogger;
  const dialects = options.dialects ?? createDialectSet(builtInDialects());
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sweeps = 0;
  let running: Promise<void> = Promise.resolve();

  const runnerRetentionSeconds = (options.runnerRetentionMs ?? 90 * 24 * 60 * 60_000) / 1000;
  const retain = async () => {
    const pruned = await pruneLedger(options.sql, options.retention);
    // Retention spans every organization by design (multi-shard statements on a sharded database).
    const wakes = await options.sql`
      /* across organizations: retention */
      delete from desktop_wake where created_at < now() - make_interval(secs => ${retentionSeconds})`;
    const runners = await options.sql`
      /* across organizations: retention */
      delete from desktop_runner where (organization_id, member_id, runner_id) in (
        select organization_id, member_id, runner_id from desktop_runner r where ${seenAt(options.sql, "r")} < now() - make_interval(secs => ${runnerRetentionSeconds})
        limit 500 for update skip locked)`;
    // A replica unseen for two presence windows holds no desktop online any more: its row only says so.
    const replicas = await options.sql`
      /* across organizations: retention */
      delete from desktop_replica where seen_at < now() - make_interval(secs => ${(2 * presenceWindowMs) / 1000})`;
    // A relayed read's answer nobody came back for is dropped: answers are handed on, never kept.
    const answers = await options.sql`
      /* across organizations: retention */
      update desktop_task set answer = null where (organization_id, id) in (
        select organization_id, id from desktop_task where answer is not null and finished_at < now() - make_interval(secs => ${UNREAD_ANSWER_SECONDS})
        limit 500 for update skip locked)`;
    const removed = { ...pruned, wakes: wakes.count, runners: runners.count, replicas: replicas.count, answers: answers.count };
    if (Object.values(removed).some((n) => n > 0)) logger.info("desktop sweeper: retention", removed);
  };
  const sweep = async () => {
    try {
      const moved = await sweepTasks({ ...options, dialects }, { presenceWindowMs, logger });
      options.onSweep?.(moved);
      if (moved.interrupted + moved.expired > 0) logger.info("desktop sweeper: tasks moved", moved);
      if (++sweeps % (options.retentionEvery ?? 30) === 0) await retain();
    } catch (error) {
      logger.warn("desktop sweeper: sweep failed", { error: errorFacts(error) });
    }
    await sweepHostKinds(options.workKinds ?? [], logger);
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
