/** A desktop_runner row. */
export interface RunnerRow {
  runner_id: string;
  organization_id: string;
  member_id: string;
  name: string;
  platform: string | null;
  app_version: string | null;
  protocol_version: number;
  capabilities: string[];
  /** Which wire the runner speaks: its dialect. */
  dialect: RunnerDialect;
  revoked_at: Date | null;
  /** When its last wake stream closed; it is offline until its next request. */
  disconnected_at: Date | null;
  /** When the runner itself was last seen (a request, or its stream's open or close). */
  last_seen_at: Date;
  /** Which process holds its wake stream, once that process's flush noted it; null when none does. */
  stream_replica: string | null;
  created_at: Date;
  /** What the desktop last reported of itself (its workspaces, engines, models), in its dialect's shape; null before its first report. */
  inventory: unknown;
  inventory_updated_at: Date | null;
}

/** A runner row as presence reads it: with when it was last seen, its own mark or its stream's replica's last flush. */
export interface SeenRunnerRow extends RunnerRow {
  seen_at: Date;
}

/** A runner channel's name: a dialect of the channel's `DialectSet` (any other reads as the default). */
export type RunnerDialect = string;
