/** A desktop_runner row. */
export interface RunnerRow {
  runner_id: string;
  organization_id: string;
  member_id: string;
  name: string;
  platform: string;
  app_version: string;
  protocol_version: number;
  capabilities: string[];
  last_seen_at: Date;
  created_at: Date;
}
