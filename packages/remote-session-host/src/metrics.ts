import type { WakeHub } from "@openwork/desktop-target";
import type { NotificationStats } from "@openwork/session-notify";
import type { Sql } from "postgres";

// Dispatch (queued → claimed) buckets, in seconds: from the SSE path's milliseconds to the poll's minute.
const DISPATCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A sample: the suffix after the family name (labels, `_sum`…) and its value. */
type Sample = [suffix: string, value: number];

const family = (name: string, type: string, help: string, samples: Sample[]) => [
  `# HELP ${name} ${help}`,
  `# TYPE ${name} ${type}`,
  ...samples.map(([suffix, value]) => `${name}${suffix} ${value}`),
];

/**
 * The gateway's operator metrics in the Prometheus text format (any Prometheus scraper and the
 * OpenTelemetry collector's Prometheus receiver read it; no dependency, nothing per member).
 * Counters live in this process; queue depth is read from PostgreSQL at scrape time.
 */
export function createMetrics(options: { sql: Sql }) {
  // What is read at scrape time, told once the parts exist (they are built after the counters they feed).
  let observed: { hub?: WakeHub; notifications?: () => Promise<NotificationStats> } = {};
  const dispatch = { buckets: DISPATCH_BUCKETS.map(() => 0), sum: 0, count: 0 };
  const counters = { leaseLosses: 0, expirations: 0 };
  return {
    /** The hub whose streams and waiters are counted, and the outbox's stats (without notifications, no outbox family). */
    observe: (parts: { hub: WakeHub; notifications?: () => Promise<NotificationStats> }) => {
      observed = parts;
    },
    /** A task waited `waitedMs` for a runner before its first claim. */
    claimed: (waitedMs: number) => {
      const seconds = waitedMs / 1000;
      DISPATCH_BUCKETS.forEach((le, i) => {
        if (seconds <= le) dispatch.buckets[i]!++;
      });
      dispatch.sum += seconds;
      dispatch.count++;
    },
    swept: (moved: { interrupted: number; expired: number }) => {
      counters.leaseLosses += moved.interrupted;
      counters.expirations += moved.expired;
    },
    /** The text a scrape of `/metrics` answers. */
    render: async (): Promise<string> => {
      // The process's gauge counts every organization's live tasks (a multi-shard count when sharded).
      const depth = await options.sql<{ state: string; n: number }[]>`
        /* across organizations: the task gauge */
        select state, count(*)::int as n from desktop_task where state in ('queued', 'claimed') group by state`;
      const byState = new Map(depth.map((row) => [row.state, row.n]));
      const stats = observed.hub?.stats() ?? { runnerStreams: 0, sessionWaiters: 0 };
      const notifications = await observed.notifications?.();
      const lines = [
        ...family(
          "openwork_desktop_tasks",
          "gauge",
          "Desktop tasks by live state.",
          ["queued", "claimed"].map((state) => [`{state="${state}"}`, byState.get(state) ?? 0]),
        ),
        ...family("openwork_dispatch_seconds", "histogram", "Time from a task queued to its first claim by a runner.", [
          ...DISPATCH_BUCKETS.map((le, i): Sample => [`_bucket{le="${le}"}`, dispatch.buckets[i]!]),
          ['_bucket{le="+Inf"}', dispatch.count],
          ["_sum", dispatch.sum],
          ["_count", dispatch.count],
        ]),
        ...family("openwork_lease_losses_total", "counter", "Runs whose desktop stopped heartbeating (interrupted).", [["", counters.leaseLosses]]),
        ...family("openwork_expirations_total", "counter", "Tasks no desktop took by their deadline.", [["", counters.expirations]]),
        ...family("openwork_runner_streams", "gauge", "Open runner wake streams in this process.", [["", stats.runnerStreams]]),
        ...family("openwork_session_waiters", "gauge", "Reads waiting for a session to change in this process.", [["", stats.sessionWaiters]]),
        // Every organization's outbox: dead deliveries stay until an operator deletes them, so an alert on dead > 0 holds.
        ...(notifications
          ? family(
              "openwork_notification_deliveries",
              "gauge",
              "Notification deliveries by status: pending (never tried), retrying (tried, due again), sent (kept 7 days), dead (gave up).",
              (["pending", "retrying", "sent", "dead"] as const).map((status) => [`{status="${status}"}`, notifications[status]]),
            )
          : []),
        ...family("openwork_db_pool_connections_max", "gauge", "The PostgreSQL pool's size.", [["", options.sql.options.max]]),
      ];
      return `${lines.join("\n")}\n`;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
