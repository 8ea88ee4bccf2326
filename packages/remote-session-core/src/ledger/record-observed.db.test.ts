import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, expect, it } from "vitest";
import { migrate } from "../migrate.js";
import { recordObservedStates } from "./record-observed.js";
import { createSessionLedger } from "./session-ledger.js";

const db = useTestDatabase();
const call = { organizationId: "org_observed", userId: "user_observer", memberId: "mem_observer", referenceId: "ref_observed" };
const errors: unknown[] = [];
const logger = { info: () => {}, warn: () => {}, error: (...args: unknown[]) => void errors.push(args) };

beforeAll(async () => {
  await migrate(db.current.sql);
});

it("records an observed state from any state the observer knew, and never over a newer writer's", async () => {
  const ledger = createSessionLedger(db.current.sql);
  const record = recordObservedStates(ledger, logger);
  // A create's row may still be queued when its turn already ended.
  const created = await ledger.insert(call, { target: "cloud", title: "observed", state: "queued" });
  expect(await record(call, created.id, { from: ["queued", "running"], state: "idle" })).toBe(true);
  expect((await ledger.find(call, created.id))?.state).toBe("idle");

  const failed = { error: "turn_failed", message: "the worker said so" };
  const running = await ledger.insert(call, { target: "cloud", title: "fails", state: "running" });
  expect(await record(call, running.id, { from: ["running"], state: "failed", lastError: failed })).toBe(true);
  expect(await ledger.find(call, running.id)).toMatchObject({ state: "failed", lastError: failed });

  // A stop recorded first stands: the observer knew the session running, not stopped.
  const stopped = await ledger.insert(call, { target: "cloud", title: "stopped", state: "stopped" });
  expect(await record(call, stopped.id, { from: ["running"], state: "idle" })).toBe(false);
  expect((await ledger.find(call, stopped.id))?.state).toBe("stopped");
  expect(errors).toEqual([]);

  // A move the table refuses from a state the observer knew is logged, not dropped silently.
  const expired = await ledger.insert(call, { target: "cloud", title: "expired", state: "expired" });
  expect(await record(call, expired.id, { from: ["expired"], state: "idle" })).toBe(false);
  expect(errors).toHaveLength(1);
});
