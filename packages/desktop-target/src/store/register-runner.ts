import type { MemberScope, Queryable } from "@openwork/remote-session-core";
import { ChannelRefusal } from "../channel-refusal.js";
import type { RunnerRow } from "./runner-row.js";

/**
 * Records (or refreshes) a runner at token mint; minting counts as being seen. A runner id
 * already registered to another member is refused: one install belongs to one member.
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
    on conflict (runner_id) do update set
      name = excluded.name, platform = excluded.platform, app_version = excluded.app_version,
      protocol_version = excluded.protocol_version, capabilities = excluded.capabilities, last_seen_at = now()
    where r.organization_id = excluded.organization_id and r.member_id = excluded.member_id
    returning *`;
  if (!row) throw new ChannelRefusal("identity_conflict", "this runner id is registered to another member");
  return row;
}
