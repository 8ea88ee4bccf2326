import type { MemberScope, Queryable } from "@openwork/remote-session-core";
import type { RunnerRow } from "./runner-row.js";

/**
 * Records (or refreshes) a runner at token mint; minting counts as being seen. Runner ids are
 * scoped to their owner: the same id under another member is another runner, answered exactly
 * as a fresh one, so nobody learns which ids exist.
 */
export async function registerRunner(
  sql: Queryable,
  scope: MemberScope,
  runner: { runnerId: string; name: string; platform: string; appVersion: string; protocolVersion: number; capabilities: string[] },
): Promise<RunnerRow> {
  const [row] = await sql<RunnerRow[]>`
    insert into desktop_runner as r
      (runner_id, organization_id, member_id, name, platform, app_version, protocol_version, capabilities)
    values (${runner.runnerId}, ${scope.organizationId}, ${scope.memberId}, ${runner.name}, ${runner.platform},
            ${runner.appVersion}, ${runner.protocolVersion}, ${runner.capabilities}::text[])
    on conflict (organization_id, member_id, runner_id) do update set
      name = excluded.name, platform = excluded.platform, app_version = excluded.app_version,
      protocol_version = excluded.protocol_version, capabilities = excluded.capabilities, last_seen_at = now()
    returning *`;
  return row!;
}
