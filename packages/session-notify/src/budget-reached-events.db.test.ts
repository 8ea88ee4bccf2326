import { randomUUID } from "node:crypto";
import { createSessionLedger } from "@openwork/remote-session-core";
import { describe, expect, it } from "vitest";
import { createNotifyChannels } from "./notify-channels.js";
import { useNotifyDatabase } from "./testing/notify-database.js";

// A pause at a budget (the ledger's budget_pause, opened by whoever recorded the spend) tells the
// member `budget_reached` once per pause, in the writer's own transaction, on a real PostgreSQL.
const db = useNotifyDatabase();

describe("a pause at a budget", () => {
  it("enqueues budget_reached once per pause, for a member whose channels take it", async () => {
    const scope = { organizationId: `org_${randomUUID().slice(0, 8)}`, userId: "user_budget" };
    await createNotifyChannels(db.current.sql).create(scope.organizationId, {
      memberId: scope.userId,
      kind: "email",
      target: "budget@example.com",
      eventKinds: ["budget_reached"],
    });
    const ledger = createSessionLedger(db.current.sql);
    const session = await ledger.insert(scope, { target: "desktop", title: "Capped", state: "queued" });
    const key = { organizationId: scope.organizationId, id: session.id };
    // A budget as a create gives it (the ledger's columns; the core's own tests cover the create).
    await db.current.sql`update remote_session set budget_tokens = 10, budgeted = true where id = ${key.id}`;
    await ledger.update(key, { state: "running", spent: { tokensIn: 20 } });
    const paused = await ledger.pauseOverBudget(key);
    expect(paused).not.toBeNull();
    // Checked again (another replica): no second pause, no second event.
    expect(await ledger.pauseOverBudget(key)).toBeNull();
    const events = await db.current.sql<{ id: string; kind: string; state: string }[]>`
      select id, kind, state from notify_event where organization_id = ${scope.organizationId}`;
    expect(events).toEqual([{ id: `${key.id}:budget:${paused!.id}`, kind: "budget_reached", state: "waiting_input" }]);
  });
});
