import type { WakeHub } from "@openwork/desktop-target";
import type { Sql } from "postgres";

// Dispatch (queued → claimed) buckets, in seconds: from the SSE path's milliseconds to the poll's minute.
const DISPATCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * The gateway's operator metrics in the Prometheus text format (any Prometheus scraper and the
 * OpenTelemetry collector's Prometheus receiver read it; no dependency, nothing per member).
 * Counters live in this process; queue depth is read from PostgreSQL at scrape time.
 */
export function createMetrics(options: { sql: Sql; hub: WakeHub }) {
  const dispatch = { buckets: DISPATCH_BUCKETS.map(() => 0), sum: 0, count: 0 };
  const counters = { leaseLosses: 0, expirations: 0 };
  return {
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
      const depth = await options.sql<{ state: string; n: number }[]>`
        select state, count(*)::int as n from desktop_task where state in ('queued', 'claimed') group by state`;
      const byState = new Map(depth.map((row) => [row.state, row.n]));
      const stats = options.hub.stats();
      const lines = [
        "# HELP openwork_desktop_tasks Desktop tasks by live state.",
        "# TYPE openwork_desktop_tasks gauge",
        ...["queued", "claimed"].map((state) => `openwork_desktop_tasks{state="${state}"} ${byState.get(state) ?? 0}`),
        "# HELP openwork_dispatch_seconds Time from a task queued to its first claim by a runner.",
        "# TYPE openwork_dispatch_seconds histogram",
        ...DISPATCH_BUCKETS.map((le, i) => `openwork_dispatch_seconds_bucket{le="${le}"} ${dispatch.buckets[i]}`),
        `openwork_dispatch_seconds_bucket{le="+Inf"} ${dispatch.count}`,
        `openwork_dispatch_seconds_sum ${dispatch.sum}`,
        `openwork_dispatch_seconds_count ${dispatch.count}`,
        "# HELP openwork_lease_losses_total Runs whose desktop stopped heartbeating (interrupted).",
        "# TYPE openwork_lease_losses_total counter",
        `openwork_lease_losses_total ${counters.leaseLosses}`,
        "# HELP openwork_expirations_total Tasks no desktop took by their deadline.",
        "# TYPE openwork_expirations_total counter",
        `openwork_expirations_total ${counters.expirations}`,
        "# HELP openwork_runner_streams Open runner wake streams in this process.",
        "# TYPE openwork_runner_streams gauge",
        `openwork_runner_streams ${stats.runnerStreams}`,
        "# HELP openwork_session_waiters Reads waiting for a session to change in this process.",
        "# TYPE openwork_session_waiters gauge",
        `openwork_session_waiters ${stats.sessionWaiters}`,
        "# HELP openwork_db_pool_connections_max The PostgreSQL pool's size.",
        "# TYPE openwork_db_pool_connections_max gauge",
        `openwork_db_pool_connections_max ${options.sql.options.max}`,
      ];
      return `${lines.join("\n")}\n`;
    },
  };
}
