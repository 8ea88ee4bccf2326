import { createSessionLedger, migrate, newReferenceId } from "@openwork/remote-session-core";
import { runTargetConformance } from "@openwork/remote-session-core/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { createEchoTarget } from "./echo-target.js";

const db = useTestDatabase();

runTargetConformance("echo", async () => {
  await migrate(db.current.sql);
  const owner = (userId: string) => () => ({ organizationId: "org_echo", userId, memberId: `mem_${userId}`, referenceId: newReferenceId() });
  return { target: createEchoTarget(), ledger: createSessionLedger(db.current.sql), call: owner("user_a"), otherCall: owner("user_b") };
});
