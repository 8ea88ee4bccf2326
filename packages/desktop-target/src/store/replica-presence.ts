import type { Queryable } from "@openwork/remote-session-core/internal";
import type { TokenHolder } from "./touch-runner.js";

/** A runner as the replica holding its stream names it. */
export type HeldRunner = Pick<TokenHolder, "organizationId" | "memberId" | "runnerId">;

/** A held runner that was revoked: its tokens minted before `tokensNotBefore` are refused. */
export interface RevokedRunner extends HeldRunner {
  /** Revoked now (every token refused), or only the tokens minted before this (ms). */
  revoked: boolean;
  tokensNotBefore: number | null;
}

/**
 * When runner `alias` was last seen: its own mark, or, while a replica holds its stream, that
 * replica's last flush, whichever is later (a replica that died stops flushing, so its desktops
 * age out like any other). For presence reads: `${seenAt(sql, "r")} as seen_at`.
 */
export function seenAt(sql: Queryable, alias: string) {
  const runner = sql(alias);
  return sql`greatest(${runner}.last_seen_at, (select p.seen_at from desktop_replica p where p.id = ${runner}.stream_replica))`;
}

/**
 * One replica's flush, as one statement: it marks itself alive, notes the runners whose streams it
 * began to hold since the last flush (`held`; those held by it already are not written again),
 * and returns its held runners that were revoked, so their streams end even when the revoke hint
 * was lost.
 */
export async function flushReplica(sql: Queryable, replicaId: string, held: readonly HeldRunner[]): Promise<RevokedRunner[]> {
  const rows = await sql<{ organization_id: string; member_id: string; runner_id: string; revoked: boolean; tokens_not_before: Date | null }[]>`
    /* across organizations: one replica's presence */
    with alive as (
      insert into desktop_replica (id) values (${replicaId})
      on conflict (id) do update set seen_at = now()
    ), holds as (
      update desktop_runner r set stream_replica = ${replicaId}
      from unnest(${held.map((h) => h.organizationId)}::text[], ${held.map((h) => h.memberId)}::text[], ${held.map((h) => h.runnerId)}::text[]) as h(o, m, id)
      where r.organization_id = h.o and r.member_id = h.m and r.runner_id = h.id and r.stream_replica is distinct from ${replicaId}
    )
    select organization_id, member_id, runner_id, revoked_at is not null as revoked, tokens_not_before from desktop_runner
    where stream_replica = ${replicaId} and (revoked_at is not null or tokens_not_before is not null)`;
  return rows.map((row) => ({
    organizationId: row.organization_id,
    memberId: row.member_id,
    runnerId: row.runner_id,
    revoked: row.revoked,
    tokensNotBefore: row.tokens_not_before?.getTime() ?? null,
  }));
}

/**
 * A runner's last stream on this replica closed: it was seen now, and no replica holds it (unless
 * another took it meanwhile). `disconnect` (a runner whose stream is its presence) also marks it
 * offline until its next request.
 */
export async function releaseRunner(sql: Queryable, replicaId: string, runner: HeldRunner, disconnect: boolean): Promise<void> {
  await sql`
    update desktop_runner set last_seen_at = now(), stream_replica = null,
      disconnected_at = case when ${disconnect}::boolean then now() else disconnected_at end
    where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and runner_id = ${runner.runnerId}
      and (stream_replica is null or stream_replica = ${replicaId})`;
}
