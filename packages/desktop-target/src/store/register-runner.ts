import type { MemberScope } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { RunnerDialect, RunnerRow } from "./runner-row.js";

/**
 * Records (or refreshes) a runner at token mint; minting counts as being seen. A revoked runner is
 * left as it is and null is returned: only its owner re-enables it (`enableRunner`). Runner ids are
 * scoped to their owner: the same id under another member is another runner, answered exactly
 * as a fresh one, so nobody learns which ids exist. Without a name (OpenWork's registration has
 * none) a new runner is named after its platform and a known one keeps its name.
 */
export async function registerRunner(
  sql: Queryable,
  scope: MemberScope,
  runner: {
    runnerId: string;
    name: string | null;
    platform: string;
    appVersion: string;
    protocolVersion: number;
    capabilities: string[];
    dialect: RunnerDialect;
  },
): Promise<RunnerRow | null> {
  const [row] = await sql<RunnerRow[]>`
    insert into desktop_runner as r
      (runner_id, organization_id, member_id, name, platform, app_version, protocol_version, capabilities, dialect)
    values (${runner.runnerId}, ${scope.organizationId}, ${scope.memberId}, ${runner.name ?? defaultName(runner.platform)}, ${runner.platform},
            ${runner.appVersion}, ${runner.protocolVersion}, ${runner.capabilities}::text[], ${runner.dialect})
    on conflict (organization_id, member_id, runner_id) do update set
      name = coalesce(${runner.name}, r.name), platform = excluded.platform, app_version = excluded.app_version,
      protocol_version = excluded.protocol_version, capabilities = excluded.capabilities, dialect = excluded.dialect,
      last_seen_at = now()
    where r.revoked_at is null
    returning *`;
  return row ?? null;
}

const PLATFORM_NAMES: Record<string, string> = { darwin: "Mac", win32: "Windows PC", linux: "Linux computer" };

/** What a runner registered without a name is called until its owner renames it. */
export function defaultName(platform: string | null): string {
  return `OpenWork desktop (${(platform && PLATFORM_NAMES[platform]) ?? "computer"})`;
}
