import type { BatchObservableResult, Meter, ObservableGauge } from "@opentelemetry/api";
import type { WakeHub } from "@openwork/desktop-target";
import type { NotificationStats } from "@openwork/session-notify/internal";
import type { Sql } from "postgres";

// Dispatch (queued → claimed) buckets, in seconds: from the SSE path's milliseconds to the poll's minute.
const DISPATCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Which per-member limit refused a request (`openwork_member_refusals{limit}`). */
export type MemberLimitName = "mcp_requests_in_flight" | "runner_stream_opens";

/** What the parts of the host tell its metrics. */
export interface Metrics {
  /** The hub whose streams and waiters are counted, and the outbox's stats (without notifications, no outbox gauge). */
  observe(parts: { hub: WakeHub; notifications?: () => Promise<NotificationStats> }): void;
  /** A task waited `waitedMs` for a runner before its first claim. */
  claimed(waitedMs: number): void;
  /** What a sweep moved: lease losses and missed deadlines. */
  swept(moved: { interrupted: number; expired: number }): void;
  /** A member's request refused by one of its limits. */
  refused(limit: MemberLimitName): void;
}

/**
 * The host's operator metrics as OpenTelemetry instruments on `meter` (a no-op until the host
 * installs an SDK; the reference gateway exports them in the Prometheus format). Nothing is per
 * member. Counters count in this process; the task gauge is read from PostgreSQL when collected.
 */
export function createMetrics(options: { sql: Sql; meter: Meter }): Metrics {
  const { meter } = options;
  const dispatch = meter.createHistogram("openwork_dispatch_seconds", {
    description: "Time from a task queued to its first claim by a runner.",
    unit: "s",
    advice: { explicitBucketBoundaries: DISPATCH_BUCKETS },
  });
  const leaseLosses = meter.createCounter("openwork_lease_losses", { description: "Runs whose desktop stopped heartbeating (interrupted)." });
  const expirations = meter.createCounter("openwork_expirations", { description: "Tasks no desktop took by their deadline." });
  const refusals = meter.createCounter("openwork_member_refusals", { description: "Requests refused by a per-member limit, by limit." });
  let observed: { hub?: WakeHub; notifications?: () => Promise<NotificationStats> } = {};
  observeGauges(options, () => observed);
  return {
    observe: (parts) => {
      observed = parts;
    },
    claimed: (waitedMs) => dispatch.record(waitedMs / 1000),
    swept: (moved) => {
      if (moved.interrupted > 0) leaseLosses.add(moved.interrupted);
      if (moved.expired > 0) expirations.add(moved.expired);
    },
    refused: (limit) => refusals.add(1, { limit }),
  };
}

/** The gauges, read when a reader collects: live tasks from PostgreSQL, the hub's streams and waiters, the outbox, the pool. */
function observeGauges(options: { sql: Sql; meter: Meter }, parts: () => { hub?: WakeHub; notifications?: () => Promise<NotificationStats> }) {
  const { meter, sql } = options;
  const gauge = (name: string, description: string) => meter.createObservableGauge(name, { description });
  const tasks = gauge("openwork_desktop_tasks", "Desktop tasks by live state.");
  const streams = gauge("openwork_runner_streams", "Open runner wake streams in this process.");
  const waiters = gauge("openwork_session_waiters", "Reads waiting for a session to change in this process.");
  const deliveries = gauge(
    "openwork_notification_deliveries",
    "Notification deliveries by status: pending (never tried), retrying (tried, due again), sent (kept 7 days), dead (gave up).",
  );
  const pool = gauge("openwork_db_pool_connections_max", "The PostgreSQL pool's size.");
  meter.addBatchObservableCallback(
    async (result) => {
      const { hub, notifications } = parts();
      // The process's gauge counts every organization's live tasks (a multi-shard count when sharded).
      const depth = await sql<{ state: string; n: number }[]>`
        /* across organizations: the task gauge */
        select state, count(*)::int as n from desktop_task where state in ('queued', 'claimed') group by state`;
      const byState = new Map(depth.map((row) => [row.state, row.n]));
      for (const state of ["queued", "claimed"]) result.observe(tasks, byState.get(state) ?? 0, { state });
      const stats = hub?.stats() ?? { runnerStreams: 0, sessionWaiters: 0 };
      result.observe(streams, stats.runnerStreams);
      result.observe(waiters, stats.sessionWaiters);
      // Every organization's outbox: dead deliveries stay until an operator deletes them, so an alert on dead > 0 holds.
      if (notifications) observeDeliveries(result, deliveries, await notifications());
      result.observe(pool, sql.options.max);
    },
    [tasks, streams, waiters, deliveries, pool],
  );
}

function observeDeliveries(result: BatchObservableResult, gauge: ObservableGauge, stats: NotificationStats) {
  for (const status of ["pending", "retrying", "sent", "dead"] as const) result.observe(gauge, stats[status], { status });
}
