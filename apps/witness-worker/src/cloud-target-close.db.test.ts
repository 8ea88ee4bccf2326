import { createCloudTarget, createHttpWorkerResolver } from "@openwork/cloud-target";
import { createSessionLedger, type LedgerSession, migrate, newReferenceId } from "@openwork/remote-session-core";
import { targetSessions } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

// A host that stops the cloud target must be able to end its process: the worker event streams
// the target opened for its waiting reads are closed with it, not left to linger.
const db = useTestDatabase();
const member = { organizationId: "org_close", userId: "user_close", memberId: "mem_close" };
let witness: RunningWitness;

beforeAll(async () => {
  witness = await startWitnessWorker({ clientToken: "client-token-close", hostToken: "host-token-close", gatewayKey: "gateway-key-close" });
  await migrate(db.current.sql);
});
afterAll(async () => {
  await witness?.close();
});

it("closes the worker event streams it opened when the host closes it", async () => {
  const streams: AbortSignal[] = [];
  const recording: typeof fetch = (input, init) => {
    if (String(input instanceof Request ? input.url : input).endsWith("/event") && init?.signal) streams.push(init.signal);
    return fetch(input, init);
  };
  const target = createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-close" }),
    isCloudEnabled: async () => true,
    webUrlTemplate: "https://web.openwork.test/w/{workspaceId}/s/{sessionId}",
    fetch: recording,
  });
  const sessions = targetSessions(target, createSessionLedger(db.current.sql));
  const call = () => ({ ...member, referenceId: newReferenceId() });
  const created = await sessions.create(call(), { title: "close me", prompt: "hello" });
  const session = (await createSessionLedger(db.current.sql).find(member, created.sessionId)) as LedgerSession;
  await sessions.read(call(), session, { limit: 20, waitMs: 300 });
  expect(streams.length).toBeGreaterThan(0);
  expect(streams.some((signal) => !signal.aborted)).toBe(true);

  target.close();
  expect(streams.every((signal) => signal.aborted)).toBe(true);
});
