import { createSessionLedger } from "@openwork/remote-session-core";
import { runTargetConformance } from "@openwork/remote-session-core/testing";
import { createRunnerClient, runRunner } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();

// The desktop target with one desktop online whose engine answers each prompt with its echo.
runTargetConformance("desktop", async () => {
  const gateway = await startRunnerGateway(db.current.url);
  const member = { organizationId: "org_conformance", memberId: "mem_conformance" };
  const token = await gateway.registerRunner(member, "runner-conformance-01", { name: "Conformance desktop" });
  const runner = runRunner({
    client: createRunnerClient({ baseUrl: gateway.baseUrl, token }),
    handlers: {
      "remote_session.create": async (assignment, { emit }) => {
        const localSessionId = `ses_${assignment.taskId.slice(-8)}`;
        emit({ type: "session.bound", payload: { localSessionId } });
        if (assignment.prompt) emit({ type: "assistant.final", payload: { messageId: `m_${assignment.taskId}`, text: `echo: ${assignment.prompt}` } });
        return { status: "done", localSessionId };
      },
      "remote_session.send": async (assignment, { emit }) => {
        emit({ type: "assistant.final", payload: { messageId: `m_${assignment.taskId}`, text: `echo: ${assignment.prompt}` } });
        return { status: "done", localSessionId: assignment.localSessionId };
      },
    },
  });
  return {
    target: gateway.target,
    ledger: createSessionLedger(gateway.sql),
    call: () => gateway.call(member),
    otherCall: () => gateway.call({ ...member, memberId: "mem_someone_else" }),
    close: async () => {
      await runner.stop();
      await gateway.close();
    },
  };
});
