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
  /** Which wire the runner speaks: our protocol or OpenWork's runner channel. */
  dialect: RunnerDialect;
  revoked_at: Date | null;
  /** When its last wake stream closed; it is offline until its next request. */
  disconnected_at: Date | null;
  last_seen_at: Date;
  created_at: Date;
}

/** The runner channels served: our own protocol, and OpenWork's (for desktops already installed). */
export type RunnerDialect = "desktop-runner" | "openwork";
