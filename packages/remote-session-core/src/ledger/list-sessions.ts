import { fail } from "../errors/session-error.js";
import { isSessionId } from "../ids.js";
import type { Queryable } from "../queryable.js";
import type { OwnerScope } from "../target.js";
import { type LedgerSession, type SessionRow, toLedgerSession } from "./ledger-session.js";

export interface ListOptions {
  target?: string;
  /** Only the sessions this session spawned. */
  spawnedBy?: string;
  limit: number;
  cursor?: string;
}

/** A member's sessions, newest first, paged by an opaque cursor; no target is contacted. */
export async function listSessions(sql: Queryable, scope: OwnerScope, options: ListOptions): Promise<{ sessions: LedgerSession[]; nextCursor: string | null }> {
  const after = options.cursor === undefined ? null : decodeListCursor(options.cursor);
  const rows = await sql<SessionRow[]>`
    select * from remote_session
    where organization_id = ${scope.organizationId} and user_id = ${scope.userId}
      and (${options.target ?? null}::text is null or target = ${options.target ?? null})
      and (${options.spawnedBy ?? null}::text is null or spawned_by = ${options.spawnedBy ?? null})
      and (${after === null} or (created_at, id) < (${after?.createdAt ?? new Date(0)}, ${after?.id ?? ""}))
    order by created_at desc, id desc
    limit ${options.limit + 1}`;
  const page = rows.slice(0, options.limit).map(toLedgerSession);
  const last = page.at(-1);
  return {
    sessions: page,
    nextCursor: rows.length > options.limit && last ? encodeListCursor(last) : null,
  };
}

/** At most this many sessions of a tree come back (the spawn rules keep live trees far smaller). */
export const TREE_LIMIT = 2_000;

/**
 * Every session below `sessionId` in its spawn tree, parents before children, at most `TREE_LIMIT`. Depth is bounded
 * by the spawn rules, and each step follows `spawned_by` within the member's own sessions.
 */
export async function listTree(sql: Queryable, scope: OwnerScope, sessionId: string): Promise<LedgerSession[]> {
  const rows = await sql<SessionRow[]>`
    with recursive below as (
      select s.*, 1 as level from remote_session s
      where s.organization_id = ${scope.organizationId} and s.user_id = ${scope.userId} and s.spawned_by = ${sessionId}
      union all
      select s.*, b.level + 1 from remote_session s join below b on s.organization_id = b.organization_id and s.spawned_by = b.id
      where s.user_id = ${scope.userId} and b.level < 64)
    select * from below order by level, created_at, id
    limit ${TREE_LIMIT}`;
  return rows.map(toLedgerSession);
}

function encodeListCursor(session: LedgerSession): string {
  return Buffer.from(JSON.stringify({ c: session.createdAt.toISOString(), i: session.id })).toString("base64url");
}

function decodeListCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { c?: unknown; i?: unknown };
    // Exactly what encodeListCursor writes: a date PostgreSQL can store, never a year it refuses.
    const written = typeof value.c === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value.c) ? new Date(value.c) : null;
    const valid = written !== null && !Number.isNaN(written.getTime()) && written.getUTCFullYear() >= 1 && written.toISOString() === value.c;
    if (valid && written && typeof value.i === "string" && isSessionId(value.i)) {
      return { createdAt: written, id: value.i };
    }
  } catch {
    // fall through
  }
  return fail("invalid_capability_arguments", "cursor is not a list cursor; pass the cursor a list returned");
}
