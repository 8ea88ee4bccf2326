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
  last_seen_at: Date;
  created_at: Date;
  /** What the desktop last reported of itself (its workspaces, engines, models), in its dialect's shape; null before its first report. */
  inventory: unknown;
  inventory_updated_at: Date | null;
}

/** A runner channel's name: a dialect of the channel's `DialectSet` (any other reads as the default). */
export type RunnerDialect = string;
