import { newId } from "@openwork/remote-session-core";
import type { OwnerScope } from "@openwork/remote-session-core/internal";
import { runMigrations } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import type { PushAuth, PushHint, PushHintKind } from "./push-bus.js";
import { MIGRATIONS } from "./sql-migrations.generated.js";

/** One server-to-client message of an MCP session, as its stream sends it. */
export interface PushEvent {
  id: string;
  message: Record<string, unknown>;
}

/** A subscribed `remote-session://` resource and what was last announced of it. */
export interface Subscription {
  uri: string;
  remoteSessionId: string;
  fingerprint: string;
}

/**
 * What a client declared at `initialize` that the gateway acts on: `elicitation` (its human may
 * be asked mid-request). Kept with the session, since its later requests may reach any replica.
 */
export interface ClientCapabilities {
  elicitation?: Record<string, unknown>;
}

/** A stateful MCP session as a request finds it. */
export interface SeenSession {
  clientCapabilities: ClientCapabilities;
}

/** Names one MCP session: its organization leads every key of the push tables (they shard by it). */
export interface McpSessionKey {
  organizationId: string;
  id: string;
}

/** How long the store keeps events and sessions (retention). */
export interface PushRetention {
  /** Events older than this are deleted. Default 1 hour. */
  eventMaxAgeMs: number;
  /** Events kept per MCP session beyond the newest this many are deleted. Default 1 000. */
  eventsPerSession: number;
  /** Sessions not seen for this long are deleted with everything they hold. Default 24 hours. */
  sessionIdleMs: number;
}

export const DEFAULT_PUSH_RETENTION: PushRetention = { eventMaxAgeMs: 3_600_000, eventsPerSession: 1_000, sessionIdleMs: 86_400_000 };

// The namespace these migrations were recorded under while they lived in the reference gateway.
const FORMER_NAMESPACE = "gateway";
const NAMESPACE = "session-push";

/**
 * Creates or updates the push tables (`mcp_session`, `mcp_subscription`, `mcp_push_event`) under
 * the migrations' advisory lock; safe from every replica at start-up. `schema`: where the tables
 * go (see `runMigrations`; default the handle's current schema). A database the reference gateway
 * migrated before push was a package keeps its tables: their records move to this package's
 * namespace first.
 */
export async function migrateSessionPush(sql: Sql, options: { schema?: string } = {}): Promise<{ applied: string[] }> {
  const names = MIGRATIONS.map((m) => m.name);
  const bookkeeping = `${options.schema ? `${options.schema}.` : ""}openwork_migrations`;
  const [known] = await sql<{ table: string | null }[]>`select to_regclass(${bookkeeping})::text as table`;
  if (known?.table) {
    await sql`
      update ${sql(known.table)} set namespace = ${NAMESPACE}
      where namespace = ${FORMER_NAMESPACE} and name = any(${names}::text[])
        and not exists (select 1 from ${sql(known.table)} where namespace = ${NAMESPACE})`;
  }
  return runMigrations(sql, { namespace: NAMESPACE, migrations: MIGRATIONS, ...options });
}

/**
 * The MCP sessions, subscriptions and events of the push path, in PostgreSQL. Each change that
 * another process must hear of is published through `publish` once its statement has committed
 * (no NOTIFY inside a statement: the hints travel on the host's wake bus).
 */
export function createPushStore(sql: Sql, publish: (hints: readonly PushHint[]) => void) {
  const store: StoreContext = {
    sql,
    tell: (organizationId, ids, k) => {
      if (ids.length > 0) publish(ids.map((m) => ({ o: organizationId, m, k })));
    },
  };
  const { tell } = store;
  return {
    /**
     * A new stateful MCP session of `owner`, who keeps at most `keep`: their oldest beyond it end
     * (with what they hold), and the replicas are told so their streams close.
     */
    open: (owner: OwnerScope, keep: number, clientCapabilities: ClientCapabilities = {}): Promise<string> =>
      openSession(store, owner, keep, clientCapabilities),
    /**
     * The session, if it exists and belongs to `owner` (another owner's reads as absent), with what
     * its client declared at `initialize`; marks it seen, once a minute at most.
     */
    touch: async (id: string, owner: OwnerScope): Promise<SeenSession | null> => {
      const [row] = await sql<{ stale: boolean; clientCapabilities: ClientCapabilities }[]>`
        select last_seen_at < now() - interval '1 minute' as stale, client_capabilities as "clientCapabilities" from mcp_session
        where id = ${id} and organization_id = ${owner.organizationId} and user_id = ${owner.userId}`;
      if (row?.stale) await sql`update mcp_session set last_seen_at = now() where organization_id = ${owner.organizationId} and id = ${id}`;
      return row ? { clientCapabilities: row.clientCapabilities } : null;
    },
    close: async (id: string, owner: OwnerScope): Promise<boolean> => {
      const rows = await sql`delete from mcp_session where id = ${id} and organization_id = ${owner.organizationId} and user_id = ${owner.userId} returning id`;
      // Its streams on other replicas close too.
      tell(owner.organizationId, rows.length > 0 ? [id] : [], "gone");
      return rows.length > 0;
    },
    /** Subscribes (again: the fingerprint is reset to what the caller sees now), and tells the replicas. */
    subscribe: (key: McpSessionKey, subscription: Subscription): Promise<void> => saveSubscription(store, key, subscription),
    unsubscribe: (key: McpSessionKey, uri: string): Promise<void> => deleteSubscription(store, key, uri),
    subscriptions: async (key: McpSessionKey): Promise<Subscription[]> =>
      sql<Subscription[]>`
        select uri, remote_session_id as "remoteSessionId", fingerprint from mcp_subscription
        where organization_id = ${key.organizationId} and mcp_session_id = ${key.id} order by uri`,
    /**
     * Records `message` as the session's next event if the resource's fingerprint differs from
     * the last announced one, and tells the replicas once it committed; one statement, so of several replicas
     * seeing the same change only one records it. Returns whether it was recorded.
     */
    announce: (key: McpSessionKey, uri: string, fingerprint: string, message: Record<string, unknown>): Promise<boolean> =>
      announceChange(store, key, { uri, fingerprint, message }),
    /** The session's events after `afterId` (all kept ones for null), oldest first. */
    eventsAfter: async (key: McpSessionKey, afterId: string | null, limit = 500): Promise<PushEvent[]> =>
      sql<PushEvent[]>`
        select e.id::text as id, e.message from mcp_push_event e
        where e.organization_id = ${key.organizationId} and e.mcp_session_id = ${key.id} and e.id > ${afterId ?? "0"}::bigint
        order by e.id limit ${limit}`,
    /** One bounded retention pass; returns how many rows it deleted. */
    prune: (retention: PushRetention = DEFAULT_PUSH_RETENTION): Promise<number> => pruneRetention(sql, retention),
  };
}

export type PushStore = ReturnType<typeof createPushStore>;

/** What the store's statements share: the handle, and how the replicas are told of a committed change. */
interface StoreContext {
  sql: Sql;
  tell: (organizationId: string, ids: readonly string[], k: PushHintKind) => void;
}

/** A new MCP session of `owner` (see `PushStore.open`); returns its id. */
async function openSession({ sql, tell }: StoreContext, owner: OwnerScope, keep: number, clientCapabilities: ClientCapabilities): Promise<string> {
  const id = newId("mcps");
  // The delete sees the sessions as they were before this insert: keep - 1 of them stay.
  const evicted = await sql`
        with created as (
          insert into mcp_session (id, organization_id, user_id, client_capabilities)
          values (${id}, ${owner.organizationId}, ${owner.userId}, ${sql.json(clientCapabilities as never)}) returning id),
        evicted as (
          delete from mcp_session where organization_id = ${owner.organizationId} and id in (
            select id from mcp_session where organization_id = ${owner.organizationId} and user_id = ${owner.userId}
            order by created_at desc, id desc offset ${Math.max(0, keep - 1)})
          returning id)
        select id from evicted`;
  tell(
    owner.organizationId,
    evicted.map((row) => row.id as string),
    "gone",
  );
  return id;
}

/** Saves a subscription (see `PushStore.subscribe`). */
async function saveSubscription({ sql, tell }: StoreContext, key: McpSessionKey, subscription: Subscription): Promise<void> {
  const saved = await sql`
        with saved as (
          insert into mcp_subscription (organization_id, mcp_session_id, uri, remote_session_id, fingerprint)
          values (${key.organizationId}, ${key.id}, ${subscription.uri}, ${subscription.remoteSessionId}, ${subscription.fingerprint})
          on conflict (organization_id, mcp_session_id, uri) do update set fingerprint = excluded.fingerprint
          returning mcp_session_id)
        select mcp_session_id from saved`;
  tell(key.organizationId, saved.length > 0 ? [key.id] : [], "subs");
}

/** Deletes a subscription and tells the replicas. */
async function deleteSubscription({ sql, tell }: StoreContext, key: McpSessionKey, uri: string): Promise<void> {
  const gone = await sql`
        with gone as (
          delete from mcp_subscription where organization_id = ${key.organizationId} and mcp_session_id = ${key.id} and uri = ${uri}
          returning mcp_session_id)
        select mcp_session_id from gone`;
  tell(key.organizationId, gone.length > 0 ? [key.id] : [], "subs");
}

/** Records a changed resource's event (see `PushStore.announce`); returns whether it was recorded. */
async function announceChange(
  { sql, tell }: StoreContext,
  key: McpSessionKey,
  change: { uri: string; fingerprint: string; message: Record<string, unknown> },
): Promise<boolean> {
  const { uri, fingerprint, message } = change;
  const rows = await sql`
        with changed as (
          update mcp_subscription set fingerprint = ${fingerprint}
          where organization_id = ${key.organizationId} and mcp_session_id = ${key.id} and uri = ${uri} and fingerprint <> ${fingerprint}
          returning organization_id, mcp_session_id),
        recorded as (
          insert into mcp_push_event (organization_id, mcp_session_id, message)
          select organization_id, mcp_session_id, ${sql.json(message as never)} from changed
          returning mcp_session_id)
        select mcp_session_id from recorded`;
  tell(key.organizationId, rows.length > 0 ? [key.id] : [], "events");
  return rows.length > 0;
}

/** One bounded retention pass (see `PushStore.prune`). */
async function pruneRetention(sql: Sql, retention: PushRetention): Promise<number> {
  // Retention spans every organization by design (multi-shard statements on a sharded database).
  const [aged, crowded, idle] = await Promise.all([
    sql`/* across organizations: retention */
            delete from mcp_push_event where (organization_id, id) in (
              select organization_id, id from mcp_push_event where created_at < now() - make_interval(secs => ${retention.eventMaxAgeMs / 1000}) limit 5000)`,
    sql`/* across organizations: retention */
            delete from mcp_push_event where (organization_id, id) in (
              select organization_id, id from (
                select organization_id, id, row_number() over (partition by organization_id, mcp_session_id order by id desc) as newer from mcp_push_event) ranked
              where newer > ${retention.eventsPerSession} limit 5000)`,
    sql`/* across organizations: retention */
            delete from mcp_session where (organization_id, id) in (
              select organization_id, id from mcp_session where last_seen_at < now() - make_interval(secs => ${retention.sessionIdleMs / 1000}) limit 500)`,
  ]);
  return aged.count + crowded.count + idle.count;
}

/** Whose MCP sessions these are: the organization and the user of the verified token. */
export function ownerOf(auth: PushAuth): OwnerScope | null {
  const { organizationId, userId } = auth.extra ?? {};
  return typeof organizationId === "string" && typeof userId === "string" ? { organizationId, userId } : null;
}

/** The key of MCP session `id` of the token's organization (a token without one names none). */
export const keyOf = (id: string, auth: PushAuth): McpSessionKey => ({ organizationId: ownerOf(auth)?.organizationId ?? "", id });
