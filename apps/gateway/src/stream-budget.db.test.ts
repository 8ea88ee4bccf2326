import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { requestRunnerToken } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const bystander = fixedDevMember("budget-bystander");
const desktops = ["budget-a", "budget-b", "budget-c", "budget-d"].map((name) => fixedDevMember(name));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gatewayWith(extra: Parameters<typeof startTestGateway>[2]) {
  const test = await startTestGateway(db.current.url, bystander, { members: () => [bystander, ...desktops], ...extra });
  cleanups.push(() => test.close());
  return test;
}

/** `perMember` runner tokens for each desktop member (the per-member stream cap is 20 a process). */
async function mintDesktops(baseUrl: string, perMember: number): Promise<string[]> {
  const mint = (member: DevMember, i: number) =>
    requestRunnerToken({
      baseUrl,
      memberToken: member.sessionToken,
      request: {
        runnerId: `runner-${member.name}-${String(i).padStart(4, "0")}`,
        name: `Desktop ${i}`,
        platform: "linux",
        appVersion: "1",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: [...RUNNER_CAPABILITIES],
      },
    }).then((minted) => minted.token);
  return Promise.all(desktops.flatMap((member) => Array.from({ length: perMember }, (_, i) => mint(member, i))));
}

function openStreams(baseUrl: string, tokens: string[]) {
  const controller = new AbortController();
  cleanups.push(() => controller.abort());
  return Promise.all(
    tokens.map((token) => fetch(`${baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })),
  );
}

it("holds wake streams apart from requests: past the stream budget a desktop is told when to come back, while agents and the other desktops' requests are served", async () => {
  // Fewer request connections than desktops: streams counted with requests would leave none.
  const test = await gatewayWith({ connectionLimits: { maxConnections: 24, maxStreams: 30 } });
  const tokens = await mintDesktops(test.gateway.baseUrl, 10);
  const opened = await openStreams(test.gateway.baseUrl, tokens);
  const refused = opened.filter((r) => r.status === 503);
  expect(opened.filter((r) => r.status === 200)).toHaveLength(30);
  expect(refused).toHaveLength(10);
  for (const answer of refused) {
    const body = (await answer.json()) as { error: string; retryAfterMs: number };
    // Spread over 30–90 s, so the refused do not all come back together.
    expect(body).toMatchObject({ error: "unavailable", retryAfterMs: expect.any(Number) });
    expect(body.retryAfterMs).toBeGreaterThanOrEqual(30_000);
    expect(body.retryAfterMs).toBeLessThan(90_000);
    expect(Number(answer.headers.get("retry-after"))).toBe(Math.ceil(body.retryAfterMs / 1000));
  }
  await eventually(() => (test.gateway.connections().streams === 30 ? true : undefined));
  expect(test.gateway.hub.stats().runnerStreams).toBe(30);
  // An agent's MCP calls and a streaming desktop's claim go through: the streams took no request slot.
  for (let i = 0; i < 5; i++) expect((await test.execute("remote-session:list", {})).isError).toBeUndefined();
  const claim = await fetch(`${test.gateway.baseUrl}/v1/desktop-runner/tasks/claim-next`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens[0]}`, "content-type": "application/json" },
    body: "{}",
  });
  expect(claim.status).toBeLessThan(300);
  expect(test.gateway.connections().open).toBeLessThanOrEqual(24);
});

it("spreads a fleet's reconnects: opens past the process's rate are each told a later turn, one slot apart", async () => {
  const test = await gatewayWith({ processLimits: { runnerStreamOpens: { burst: 5, perSecond: 20 } } });
  const tokens = await mintDesktops(test.gateway.baseUrl, 10);
  const opened = await openStreams(test.gateway.baseUrl, tokens);
  const refused = opened.filter((r) => r.status === 503);
  expect(opened.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(5);
  expect(refused.length).toBeGreaterThanOrEqual(30);
  const waits = (await Promise.all(refused.map(async (r) => ((await r.json()) as { retryAfterMs: number }).retryAfterMs))).sort((a, b) => a - b);
  // Slots of 50 ms (20 a second), each with up to a slot of jitter: the last comes back about n slots after the first.
  expect(waits.at(-1)! - waits[0]!).toBeGreaterThanOrEqual((waits.length - 3) * 50);
  expect(waits.at(-1)!).toBeLessThan((waits.length + 3) * 50 + 1_000);
});
