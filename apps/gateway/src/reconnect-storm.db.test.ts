import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken, type Runner, runRunner } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
// 200 desktops, 10 for each of 20 members (a process keeps at most 20 streams a member).
const desktopMembers = Array.from({ length: 20 }, (_, i) => fixedDevMember(`storm-${i}`));
const agent = fixedDevMember("storm-agent");
const DESKTOPS = 200;
// Far below a real process's rate (200 a second), so the storm here is past it as 19 000 desktops would be.
const opens = { burst: 20, perSecond: 50 };
const runners: Runner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.stop()));
});

const lifeOn = (port: number) =>
  startTestGateway(db.current.url, agent, { port, members: () => [agent, ...desktopMembers], processLimits: { runnerStreamOpens: opens } });

it("after a restart every desktop streams again within seconds, spread by the open rate's turns, while the agent's MCP calls are all answered", async () => {
  const first = await lifeOn(0);
  const { baseUrl } = first.gateway;
  const port = Number(new URL(baseUrl).port);
  for (let i = 0; i < DESKTOPS; i++) {
    const member = desktopMembers[i % desktopMembers.length]!;
    const minted = await requestRunnerToken({
      baseUrl,
      memberToken: member.sessionToken,
      request: {
        runnerId: `storm-desktop-${String(i).padStart(4, "0")}`,
        name: `Desktop ${i}`,
        platform: "linux",
        appVersion: "1",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: [...RUNNER_CAPABILITIES],
      },
    });
    // The runner as shipped: its default backoff (with jitter) and stream timings.
    runners.push(runRunner({ client: createRunnerClient({ baseUrl, token: minted.token }), handlers: {} }));
  }
  await eventually(() => (first.gateway.hub.stats().runnerStreams === DESKTOPS ? true : undefined), 30_000);

  // The process restarts: every stream drops at once, and every desktop comes back to the new one.
  await first.close();
  const second = await lifeOn(port);
  const restarted = Date.now();
  let calls = 0;
  const refused: string[] = [];
  let calling = true;
  const agentCalls = (async () => {
    while (calling) {
      calls++;
      const result = await second
        .execute("remote-session:list", {})
        .catch((error: unknown) => ({ isError: true, structuredContent: { error: String(error) } }));
      if (result.isError) refused.push(JSON.stringify(result.structuredContent).slice(0, 200));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  try {
    await eventually(() => (second.gateway.hub.stats().runnerStreams === DESKTOPS ? true : undefined), 30_000);
    const tookMs = Date.now() - restarted;
    // The opens past the burst were told their turns (a slot of 20 ms each): at least (200 − 20) / 50 s, and well within 15 s.
    expect(tookMs).toBeGreaterThanOrEqual(((DESKTOPS - opens.burst) / opens.perSecond) * 1000 * 0.8);
    expect(tookMs).toBeLessThan(15_000);
    const metrics = await (await fetch(`${second.gateway.baseUrl}/metrics`)).text();
    const turnsGiven = Number(
      metrics
        .split("\n")
        .find((line) => line.startsWith('openwork_member_refusals_total{limit="runner_stream_opens"}'))
        ?.split(" ")
        .at(-1) ?? 0,
    );
    expect(turnsGiven).toBeGreaterThan(0);
  } finally {
    calling = false;
    await agentCalls;
    await second.close();
  }
  expect(calls).toBeGreaterThan(20);
  expect(refused).toEqual([]);
}, 120_000);
