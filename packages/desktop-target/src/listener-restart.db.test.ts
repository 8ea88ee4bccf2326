import { createRunnerClient, type Runner, runRunner } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { startEmbeddedPostgres } from "@openwork/test-postgres";
import { it } from "vitest";
import { startRunnerGateway } from "./testing/runner-gateway.js";

// A server of this file's own: restarting the run's shared server would disturb other files.
it("keeps waking runners after PostgreSQL restarts under the gateway", async () => {
  const server = await startEmbeddedPostgres();
  const gateway = await startRunnerGateway(server.url);
  let runner: Runner | undefined;
  try {
    const member = { organizationId: "org_restart", memberId: "mem_restart" };
    const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-restart-01") });
    const done: string[] = [];
    runner = runRunner({
      client,
      pollIntervalMs: 600_000,
      backoff: { baseMs: 50, maxMs: 500, random: () => 0.5 },
      handlers: { "remote_session.create": async (a) => (done.push(a.taskId), { status: "done", localSessionId: `ses_${a.taskId}` }) },
    });
    await eventually(() => (gateway.hub.stats().runnerStreams === 1 ? true : undefined));
    const before = gateway.hub.stats().listens;

    await server.restart();
    // postgres.js re-establishes the LISTEN connection by itself; onlisten fires again.
    await eventually(() => (gateway.hub.stats().listens > before ? true : undefined), 15_000);

    const created = await gateway.sessions.create(gateway.call(member), { title: "after restart", prompt: "hi" });
    const [task] = await gateway.sql<{ id: string }[]>`select id from desktop_task where session_id = ${created.sessionId}`;
    // The backstop poll is 10 minutes away: only a wake-up can deliver it this fast.
    await eventually(() => (done.includes(task!.id) ? true : undefined), 5_000);
  } finally {
    await runner?.stop();
    await gateway.close();
    await server.stop();
  }
}, 60_000);
