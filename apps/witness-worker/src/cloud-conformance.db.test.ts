import { createCloudTarget, createHttpWorkerResolver } from "@openwork/cloud-target";
import { createSessionLedger, migrate, newReferenceId } from "@openwork/remote-session-core";
import { runTargetConformance } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { startWitnessWorker } from "./start-witness-worker.js";

const db = useTestDatabase();

// The cloud target against the witness worker's echo engine.
runTargetConformance("cloud", async () => {
  await migrate(db.current.sql);
  const witness = await startWitnessWorker({ clientToken: "client-token-conf", hostToken: "host-token-conf", gatewayKey: "gateway-key-conf" });
  const target = createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-conf" }),
    isCloudEnabled: async () => true,
    readPollMs: 50,
  });
  const owner = (userId: string) => () => ({ organizationId: "org_conformance", userId, memberId: `mem_${userId}`, referenceId: newReferenceId() });
  return { target, ledger: createSessionLedger(db.current.sql), call: owner("user_a"), otherCall: owner("user_b"), close: () => witness.close() };
});
