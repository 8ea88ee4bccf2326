import type { Queryable } from "@openwork/remote-session-core/internal";
import { defaultName } from "./register-runner.js";
import { seenAt } from "./replica-presence.js";
import type { RunnerDialect } from "./runner-row.js";

// Presence needs minutes of precision (its window is 10), not a write per request: at most one
// write per runner a minute, however often it polls, and none while a replica holds its stream
// (that replica's flushes keep it seen; a closed stream's mark is cleared at once). The write is
// HOT: no index holds last_seen_at (migration 0009).
const PRESENCE_WRITE_INTERVAL_SECONDS = 60;

/** Who a verified token names, and when it was minted. */
export interface TokenHolder {
  organizationId: string;
  memberId: string;
  runnerId: string;
  mintedAt: number;
}

/** A runner's registration as a request needs it. */
export interface RegisteredRunner {
  protocolVersion: number;
  capabilities: string[];
  dialect: RunnerDialect;
}

/**
 * Marks the runner as seen now (throttled) and returns its registration, or null when the runner
 * is not registered to this member, is revoked, or was revoked after the token was minted — even
 * if it was re-enabled since: a token minted before a revocation never works again.
 */
export async function touchRunner(sql: Queryable, holder: TokenHolder): Promise<RegisteredRunner | null> {
  const [row] = await sql<(RegisteredRunner & { stale: boolean; revoked: boolean })[]>`
    select protocol_version as "protocolVersion", capabilities, dialect,
      (revoked_at is not null or coalesce(tokens_not_before >= to_timestamp(${holder.mintedAt}::double precision / 1000), false)) as revoked,
      (${seenAt(sql, "r")} < now() - make_interval(secs => ${PRESENCE_WRITE_INTERVAL_SECONDS}) or disconnected_at is not null) as stale
    from desktop_runner r
    where runner_id = ${holder.runnerId} and organization_id = ${holder.organizationId} and member_id = ${holder.memberId}`;
  if (!row || row.revoked) return null;
  if (row.stale) {
    await sql`
      update desktop_runner set last_seen_at = now(), disconnected_at = null
      where organization_id = ${holder.organizationId} and member_id = ${holder.memberId} and runner_id = ${holder.runnerId}`;
  }
  return { protocolVersion: row.protocolVersion, capabilities: row.capabilities, dialect: row.dialect };
}

/**
 * Records a runner known only from its token (minted elsewhere with the shared secret), for a
 * dialect whose tokens need no registration: the first request registers it. A row that exists
 * (revoked or not) is left as it is.
 */
export async function recordTokenRunner(sql: Queryable, holder: TokenHolder, dialect: RunnerDialect): Promise<void> {
  await sql`
    insert into desktop_runner (runner_id, organization_id, member_id, name, platform, app_version, protocol_version, capabilities, dialect)
    values (${holder.runnerId}, ${holder.organizationId}, ${holder.memberId}, ${defaultName(null)}, null, null, 1, '{}', ${dialect})
    on conflict (organization_id, member_id, runner_id) do nothing`;
}
