import { createRunnerClient, RunnerProtocolError } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();

it("16 runners racing for 500 tasks claim each exactly once and lose none", async () => {
  const gateway = await startRunnerGateway(db.current.url);
  try {
    const member = { organizationId: "org_race", memberId: "mem_race" };
    const clients = await Promise.all(
      Array.from({ length: 16 }, async (_, i) =>
        createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, `runner-race-${String(i).padStart(4, "0")}`) }),
      ),
    );
    const deliverBy = new Date(Date.now() + 10 * 60_000).toISOString();
    for (let i = 0; i < 500; i++) await gateway.sessions.create(gateway.call(member), { title: `task ${i}`, deliverBy });

    const claims: { taskId: string; runner: number }[] = [];
    let conflicts = 0;
    await Promise.all(
      clients.map(async (client, runner) => {
        for (;;) {
          const { items } = await client.work();
          if (items.length === 0) return;
          for (const item of items) {
            try {
              const assignment = await client.claim(item.taskId);
              claims.push({ taskId: item.taskId, runner });
              await client.complete(item.taskId, { attempt: assignment.attempt, status: "done", localSessionId: `ses_${item.taskId}` });
            } catch (error) {
              if (!(RunnerProtocolError.isInstance(error) && error.status === 409)) throw error;
              conflicts++;
            }
          }
        }
      }),
    );
    expect(claims).toHaveLength(500);
    expect(new Set(claims.map((c) => c.taskId)).size).toBe(500);
    // Every runner got a share: the claims really raced.
    expect(new Set(claims.map((c) => c.runner)).size).toBeGreaterThan(1);
    expect(conflicts).toBeGreaterThan(0);
    const rows = await gateway.sql<{ state: string; attempt: number; n: number }[]>`
      select state, attempt, count(*)::int as n from desktop_task where member_id = ${member.memberId} group by state, attempt`;
    expect(rows).toEqual([{ state: "done", attempt: 1, n: 500 }]);
  } finally {
    await gateway.close();
  }
}, 120_000);
