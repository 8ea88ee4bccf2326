import { createTestDatabase, useTestDatabase } from "@openwork/test-postgres";
import { runMigrations } from "@openwork/remote-session-core/internal";
import { beforeAll, describe, expect, it } from "vitest";
import type { PushHint } from "./push-bus.js";
import { createPushStore, DEFAULT_PUSH_RETENTION, migrateSessionPush } from "./push-store.js";
import { DEFAULT_PUSH_LIMITS } from "./push-route.js";
import { MIGRATIONS } from "./sql-migrations.generated.js";

// The push store on a real PostgreSQL: what it keeps, and the hints it hands the bus after each change.
const db = useTestDatabase();
const owner = { organizationId: "org_push_store", userId: "user_push_store" };
const REMOTE = "rs_0000000000000000000000stor";
const uri = `remote-session://${REMOTE}`;
const message = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } };

beforeAll(async () => {
  await migrateSessionPush(db.current.sql);
});

/** A store whose hints are recorded instead of published. */
function recordingStore() {
  const hints: PushHint[] = [];
  return { hints, store: createPushStore(db.current.sql, (published) => void hints.push(...published)) };
}

describe("the push store", () => {
  it("announces a change once however many replicas see it, and keeps events an hour, 1 000 per session, sessions a day unseen", async () => {
    const { sql } = db.current;
    const { store } = recordingStore();
    const kept = await store.open(owner, DEFAULT_PUSH_LIMITS.mcpSessions);
    const idle = await store.open(owner, DEFAULT_PUSH_LIMITS.mcpSessions);
    const key = { organizationId: owner.organizationId, id: kept };
    await store.subscribe(key, { uri, remoteSessionId: REMOTE, fingerprint: "seen" });
    // Two replicas seeing the same change: one event.
    expect(await Promise.all([store.announce(key, uri, "changed", message), store.announce(key, uri, "changed", message)])).toEqual(
      expect.arrayContaining([true, false]),
    );
    expect(await store.eventsAfter(key, null)).toHaveLength(1);

    await sql`insert into mcp_push_event (organization_id, mcp_session_id, message, created_at) select ${owner.organizationId}, ${kept}, '{}'::jsonb, now() - interval '2 hours' from generate_series(1, 3)`;
    await sql`insert into mcp_push_event (organization_id, mcp_session_id, message) select ${owner.organizationId}, ${kept}, jsonb_build_object('n', n) from generate_series(1, 1000) as n`;
    await sql`insert into mcp_push_event (organization_id, mcp_session_id, message) select ${owner.organizationId}, ${idle}, '{}'::jsonb from generate_series(1, 5)`;
    await sql`update mcp_session set last_seen_at = now() - interval '2 days' where id = ${idle}`;
    await store.prune(DEFAULT_PUSH_RETENTION);
    const left = await sql<{ id: string; n: number }[]>`select mcp_session_id as id, count(*)::int as n from mcp_push_event group by 1`;
    expect(left.find((row) => row.id === kept)?.n).toBe(1_000);
    expect(left.find((row) => row.id === idle)).toBeUndefined();
    // The newest thousand are the ones kept, and they come back in the order they were recorded.
    const keptEvents = await store.eventsAfter(key, null, 1_000);
    expect(keptEvents.map((e) => (e.message as { n: number }).n)).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1));
    expect(keptEvents.at(-1)?.message).toEqual({ n: 1000 });
    expect(await store.touch(idle, owner)).toBeNull();
    expect(await store.touch(kept, owner)).toEqual({ clientCapabilities: {} });
    // What a client declared at initialize comes back with its session, on whichever replica asks.
    const eliciting = await store.open(owner, DEFAULT_PUSH_LIMITS.mcpSessions, { elicitation: { form: {} } });
    expect(await store.touch(eliciting, owner)).toEqual({ clientCapabilities: { elicitation: { form: {} } } });
    expect(await store.touch(eliciting, { ...owner, userId: "user_someone_else" })).toBeNull();
  });

  it("hands the bus one hint per change once its statement is done, and none for what changed nothing", async () => {
    const { hints, store } = recordingStore();
    const other = { organizationId: owner.organizationId, userId: "user_push_hints" };
    const first = await store.open(other, 2);
    const second = await store.open(other, 2);
    expect(hints).toEqual([]);
    // A third session of a member who keeps two ends their oldest: its streams are told.
    const third = await store.open(other, 2);
    expect(hints.splice(0)).toEqual([{ o: owner.organizationId, m: first, k: "gone" }]);

    const key = { organizationId: owner.organizationId, id: second };
    await store.subscribe(key, { uri, remoteSessionId: REMOTE, fingerprint: "a" });
    expect(hints.splice(0)).toEqual([{ o: owner.organizationId, m: second, k: "subs" }]);
    await store.announce(key, uri, "b", message);
    await store.announce(key, uri, "b", message);
    expect(hints.splice(0)).toEqual([{ o: owner.organizationId, m: second, k: "events" }]);
    await store.unsubscribe(key, uri);
    await store.unsubscribe(key, uri);
    expect(hints.splice(0)).toEqual([{ o: owner.organizationId, m: second, k: "subs" }]);
    expect(await store.close(third, other)).toBe(true);
    expect(await store.close(third, other)).toBe(false);
    expect(hints.splice(0)).toEqual([{ o: owner.organizationId, m: third, k: "gone" }]);
  });

  it("keeps the tables of a database the reference gateway migrated before push was a package", async () => {
    const former = await createTestDatabase();
    try {
      await runMigrations(former.sql, { namespace: "gateway", migrations: MIGRATIONS });
      await former.sql`insert into mcp_session (id, organization_id, user_id) values ('mcps_0000000000000000000000kept', 'org_former', 'u')`;
      expect(await migrateSessionPush(former.sql)).toEqual({ applied: [] });
      const rows = await former.sql<{ namespace: string }[]>`select distinct namespace from openwork_migrations`;
      expect(rows.map((row) => row.namespace)).toEqual(["session-push"]);
      expect(await former.sql`select id from mcp_session`).toHaveLength(1);
    } finally {
      await former.drop();
    }
  });
});
