import { createRunnerClient } from "@openwork/runner-protocol/client";
import { openWakeStream, type WakeEvent } from "@openwork/runner-protocol/internal";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();

it("wakes a runner streaming from replica A for a task enqueued through replica B", async () => {
  // Two gateway processes in all but name: each its own pool, LISTEN connection and routes.
  const a = await startRunnerGateway(db.current.url);
  const b = await startRunnerGateway(db.current.url);
  try {
    const member = { organizationId: "org_replicas", memberId: "mem_replicas" };
    // Tokens are bound to a replica's base URL; the runner here talks to replica A only.
    const client = createRunnerClient({ baseUrl: a.baseUrl, token: await a.registerRunner(member, "runner-replica-0001") });
    const events: WakeEvent[] = [];
    let opened = 0;
    const stream = openWakeStream({ client, onEvent: (e) => events.push(e), onOpen: () => opened++ });
    await eventually(() => (opened > 0 && a.hub.stats().runnerStreams === 1 ? true : undefined));

    const started = Date.now();
    const created = await b.sessions.create(b.call(member), { title: "from B", prompt: "hi" });
    const hint = await eventually(() => events.find((e) => e.type === "remote_session_work_available"));
    expect(Date.now() - started).toBeLessThan(1_000);
    const [task] = await a.sql<{ id: string }[]>`select id from desktop_task where session_id = ${created.sessionId}`;
    expect(hint).toMatchObject({ taskId: task!.id });
    expect(a.hub.stats().listens).toBe(1);
    expect(b.hub.stats().runnerStreams).toBe(0);
    stream.close();
    await stream.closed;
  } finally {
    await a.close();
    await b.close();
  }
});
