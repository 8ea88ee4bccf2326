import { createSessionLedger } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { describeRunnerChannel } from "@openwork/runner-protocol/testing";
import type { CompleteRequest, TaskEvent } from "@openwork/runner-protocol/internal";
import { sweepTasks } from "./store/sweep-tasks.js";
import { startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
const member = { organizationId: "org_conformance", memberId: "mem_conformance" };

// The same suite runner-protocol runs against its in-memory double, here against the real
// routes, Postgres and wake-up path.
describeRunnerChannel("desktop-target routes on PostgreSQL", async () => {
  const gateway = await startRunnerGateway(db.current.url);
  const taskOf = async (sessionId: string) => {
    const [row] = await gateway.sql<{ id: string }[]>`select id from desktop_task where session_id = ${sessionId}`;
    return row!.id;
  };
  return {
    baseUrl: gateway.baseUrl,
    registerRunner: async ({ runnerId, capabilities }) => ({
      token: await gateway.registerRunner(member, runnerId, capabilities ? { capabilities } : {}),
    }),
    enqueueCreate: async ({ title, prompt, runnerId }) => {
      const created = await gateway.sessions.create(gateway.call(member), {
        title,
        ...(prompt ? { prompt } : {}),
        // Unpinned work exists only as store-and-forward: any of the member's runners may take it.
        ...(runnerId ? { runner: runnerId } : { deliverBy: new Date(Date.now() + 600_000).toISOString() }),
      });
      return { taskId: await taskOf(created.sessionId) };
    },
    requestCancel: async (taskId) => {
      const [row] = await gateway.sql<{ session_id: string }[]>`select session_id from desktop_task where id = ${taskId}`;
      const session = await createSessionLedger(gateway.sql).find(gateway.call(member), row!.session_id);
      await gateway.sessions.stop(gateway.call(member), session!);
    },
    loseLease: async (taskId) => {
      await gateway.sql`update desktop_task set lease_expires_at = now() - interval '1 second' where id = ${taskId}`;
      await sweepTasks(gateway.store);
    },
    inspect: async (taskId) => {
      const [task] = await gateway.sql<{ state: string; attempt: number; completion: CompleteRequest | null }[]>`
        select state, attempt, completion from desktop_task where id = ${taskId}`;
      const events = await gateway.sql<{ event: TaskEvent }[]>`
        select event from desktop_task_event where task_id = ${taskId} order by attempt, sequence`;
      return { state: task!.state, attempt: task!.attempt, completion: task!.completion, events: events.map((e) => e.event) };
    },
    close: () => gateway.close(),
  };
});
