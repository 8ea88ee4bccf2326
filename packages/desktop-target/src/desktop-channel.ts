import { type Logger, silentLogger, type Target } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { createDesktopTarget, type DesktopTargetOptions } from "./desktop-target.js";
import { type DesktopTimings, resolveTimings } from "./desktop-timings.js";
import { builtInDialects, createDialectSet, type Dialect, type DialectSet } from "./dialects/index.js";
import type { HostWorkKind } from "./host-work-kind.js";
import { createRunnerRoutes, type RunnerRoutes } from "./routes/create-runner-routes.js";
import { wakeRunners } from "./store/enqueue-task.js";
import { type TransactionScope, transaction } from "./store/transaction.js";
import { startSweeper, type SweeperOptions } from "./sweeper.js";
import { createHintPublisher, type HintPublisher } from "./wake/hints.js";
import { postgresWakeBus, type WakeBus } from "./wake/wake-bus.js";
import { createWakeHub, type StreamLimits, type WakeHub } from "./wake/wake-hub.js";

/** What the runner routes take besides what the channel gives them (the database, the hub, the timings, the logger). */
export type ChannelRoutesOptions = Omit<Parameters<typeof createRunnerRoutes>[0], "sql" | "hub" | "timings" | "logger" | "dialectSet" | "workKinds">;

export interface DesktopChannelOptions {
  /** The host's PostgreSQL handle: the tables, and the default bus's NOTIFY. */
  sql: Sql;
  /**
   * The client the default bus LISTENs on: a direct connection to the primary, never through a
   * pooler in transaction mode (which drops LISTEN without an error). Default `sql`.
   */
  listen?: Sql;
  /** The bus hints travel on between processes (e.g. NATS). Default PostgreSQL LISTEN/NOTIFY. Closed by `close()`. */
  bus?: WakeBus;
  /** Every timing of the channel; those not given are `DEFAULT_DESKTOP_TIMINGS`'. Resolved once, here. */
  timings?: Partial<DesktopTimings>;
  /**
   * The runner channels the channel knows, as values, the default (what names none) first.
   * Default `builtInDialects()`: ours and OpenWork's. Which of them are served is `routes.dialects`.
   */
  dialects?: readonly Dialect[];
  /** The runner routes desktops open: the token secret, the base URL, the member checks, the dialects served… */
  routes: ChannelRoutesOptions;
  /**
   * Work kinds of the host's own (an Automation run…), each with its own table, lifecycle and
   * eligibility, served to runners of our protocol on the same channel, token and wake stream as
   * the remote-session kinds (protocol 4); the sweeper calls their `sweep`. Default: none.
   */
  workKinds?: readonly HostWorkKind[];
  /** The desktop target's own options (web links). */
  target?: Omit<DesktopTargetOptions, "sql" | "hub" | "timings" | "logger" | "dialects">;
  /** The sweeper's options (retention, metrics); `false` when another process sweeps. Started by `start()`. */
  sweeper?: false | Omit<SweeperOptions, "sql" | "publisher" | "timings" | "logger" | "dialects" | "workKinds">;
  /** Open runner streams one process keeps per runner and per member. */
  streamLimits?: Partial<StreamLimits>;
  /** How long the hub's start-up probe waits for its own hint. Default 5 s. */
  probeTimeoutMs?: number;
  logger?: Logger;
}

/** The desktop channel of one process: built once, it owns its bus, its publisher and its timings. */
export interface DesktopChannel {
  /** The timings the target, the routes and the sweeper were all given. */
  readonly timings: Readonly<DesktopTimings>;
  /** The process's wake hub (streams, waiters, the bus). */
  readonly hub: WakeHub;
  /** The one publisher of the channel's hints, on its bus (the hub's, the transactions'). */
  readonly publisher: HintPublisher;
  /** The channel's database handle with its publisher (what `transaction()` takes) and its dialects. */
  readonly store: TransactionScope & { readonly dialects: DialectSet };
  /** The desktop Target. */
  readonly target: Target;
  /** The runner routes. */
  readonly routes: RunnerRoutes;
  /** Resolves once the bus listens and carried the start-up probe's hints back; rejects with the reason it did not. */
  readonly ready: Promise<void>;
  /**
   * Wakes the runners of a member (or one runner) for a task of a host's kind, once the host's
   * transaction that queued it committed: their wake streams say work waits, and they claim it.
   */
  announceWork(task: WorkAnnouncement): Promise<void>;
  /** Waits for `ready`, then starts the sweeper (once). Call it after the tables are migrated. */
  start(): Promise<void>;
  /** Stops the sweeper and closes the hub and its bus. `sql` and `listen` stay the host's. */
  close(): Promise<void>;
}

/** A task of a host's kind that runners should hear of. */
export interface WorkAnnouncement {
  taskId: string;
  organizationId: string;
  memberId: string;
  /** Wake only this runner (who may claim the task is the kind's eligibility); absent: every runner of the member. */
  runnerId?: string;
}

/**
 * Builds the desktop channel: the bus (PostgreSQL LISTEN/NOTIFY unless given one), the one hint
 * publisher on it, the wake hub, the desktop Target, the runner routes and (on `start()`) the
 * sweeper, all given the same resolved timings. Nothing lives outside the object: two channels
 * in one process, on two database handles, share nothing.
 */
export function createDesktopChannel(options: DesktopChannelOptions): DesktopChannel {
  const { sql } = options;
  const logger = options.logger ?? silentLogger;
  const timings = Object.freeze(resolveTimings(options.timings));
  const bus = options.bus ?? postgresWakeBus({ sql, ...(options.listen ? { listen: options.listen } : {}) });
  const publisher = createHintPublisher(bus);
  const hub = createWakeHub({
    sql,
    bus,
    publisher,
    logger,
    ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}),
    ...(options.probeTimeoutMs ? { probeTimeoutMs: options.probeTimeoutMs } : {}),
  });
  // One set for the target, the routes and the sweeper: they read the same rows' dialect names.
  const dialects = createDialectSet(options.dialects ?? builtInDialects());
  const target = createDesktopTarget({ ...options.target, sql, hub, timings, dialects, logger });
  // The routes check the kinds as they are built, here: a mistake fails the host's start-up.
  const workKinds = options.workKinds ?? [];
  const routes = createRunnerRoutes({ ...options.routes, sql, hub, timings, dialectSet: dialects, workKinds, logger });
  let sweeper: { stop(): Promise<void> } | null = null;
  let starting: Promise<void> | null = null;
  let closing: Promise<void> | null = null;
  const start = async () => {
    await hub.ready;
    if (options.sweeper === false || closing) return;
    sweeper ??= startSweeper({ ...options.sweeper, sql, publisher, timings, dialects, workKinds, logger });
  };
  return {
    timings,
    hub,
    publisher,
    store: { sql, publisher, dialects },
    target,
    routes,
    ready: hub.ready,
    announceWork: (task) =>
      transaction({ sql, publisher }, (tx, hints) =>
        wakeRunners(tx, hints, { id: task.taskId, organization_id: task.organizationId, member_id: task.memberId, pinned_runner_id: task.runnerId ?? null }),
      ),
    start: () => (starting ??= start()),
    close: () =>
      (closing ??= (async () => {
        await sweeper?.stop();
        await hub.close();
      })()),
  };
}
